// Metrics on hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/metrics.hpp"

TEST(Metrics, HandComputedRealCase) {
  // ref (3, 4, 0), test (3, 4, 1): error (0, 0, 1); ||e|| = 1, ||ref|| = 5, max|ref| = 4.
  const auto m = core::compare(std::vector<double>{3, 4, 0}, std::vector<double>{3, 4, 1});
  EXPECT_DOUBLE_EQ(m.rel_l2, 0.2);
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(m.mse, 1.0 / 3);
  EXPECT_NEAR(m.psnr_db, 20 * std::log10(4 / std::sqrt(1.0 / 3)), 1e-12);  // 16.80 dB
  EXPECT_NEAR(m.snr_db, 20 * std::log10(5.0), 1e-12);                      // 13.98 dB
  EXPECT_EQ(m.count, 3u);
}

TEST(Metrics, ComplexUsesModulus) {
  using c = std::complex<double>;
  const auto m = core::compare(std::vector<c>{{0, 2}}, std::vector<c>{{1, 2}});
  EXPECT_DOUBLE_EQ(m.rel_l2, 0.5);
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
  EXPECT_NEAR(m.psnr_db, 20 * std::log10(2.0), 1e-12);
}

TEST(Metrics, IdenticalArraysHaveInfinitePsnr) {
  const auto m = core::compare(std::vector<double>{1, 2}, std::vector<double>{1, 2});
  EXPECT_EQ(m.rel_l2, 0);
  EXPECT_TRUE(std::isinf(m.psnr_db));
}

TEST(Metrics, NanNeverPasses) {
  const auto m = core::compare(std::vector<double>{1, 2}, std::vector<double>{1, std::nan("")});
  EXPECT_FALSE(m.finite);
  EXPECT_FALSE(m.rel_l2 <= 1.0);
}

TEST(Metrics, SizeMismatchIsAnError) {
  EXPECT_THROW(core::compare(std::vector<double>{1}, std::vector<double>{1, 2}), std::invalid_argument);
}
