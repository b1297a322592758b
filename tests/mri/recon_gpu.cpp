// The least-squares solver on the GPU (steps/mri/recon/recon_gpu.hpp) against the CPU's
// (steps/mri/recon/recon.hpp), which tests/unit/test_recon.cpp holds to F^H F written out and to
// the dense solution. Exits 77 (SKIP) where there is no GPU or the build has no CUDA.
//
// Tolerances. The products are the same arithmetic up to the FFT libraries' rounding: 1e-12
// relative (double rounding times the transforms' log2 depth is ~1e-14). CG amplifies rounding
// by the system's conditioning: with lambda = 3000 (the program's default) perturbing every
// element of Q by 1e-15 (and by 1e-13) relative moves the CPU's image by 4e-16 on tiny (20
// iterations) and 5e-15 (3e-14) on small (50 iterations), and its residuals by 3.5e-12 at
// most; the limits below, 1e-9 on the image and 1e-6 on each residual, leave a margin of 1e5
// or more. Without the penalty tiny is ill-conditioned (the same 1e-15 moves its image by 4e-4
// after 50 iterations), so the CG comparisons use lambda > 0.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "core/device.hpp"
#include "core/error.hpp"
#include "mri/problem.hpp"
#include "recon/recon.hpp"
#include "recon/recon_gpu.hpp"
#include "recon/recon_model.hpp"

namespace {

using mri::cvec;
using cplx = std::complex<double>;

double rel_diff(const cvec& got, const cvec& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += std::norm(got[i] - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

cvec random_vector(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  cvec v(n);
  for (auto& x : v) x = cplx(g(rng), g(rng));
  return v;
}

// The CPU's A rho = F^H F rho + lambda W^H W rho.
cvec cpu_normal(std::array<int, 3> n, const cvec& q2n, double lambda, const cvec& rho) {
  const mri::Toeplitz t(n, q2n);
  cvec out, w;
  t.apply(rho, out);
  mri::regularizer(n, rho, w);
  for (size_t i = 0; i < out.size(); ++i) out[i] += lambda * w[i];
  return out;
}

struct Sums {
  std::array<int, 3> n;
  cvec fhd, q;
};

// The reconstruction's problem of a size (object data, blur 1, noise 1e-4) and its sums by the
// NUFFT (the tests compare solvers, not sums).
Sums sums_of(const std::string& size) {
  mri::ReconSpec spec;
  spec.size = size;
  spec.blur = 1;
  spec.noise = 1e-4;
  const mri::Problem p = mri::recon_problem(spec);
  return {p.grid, mri::nufft_sums(p, mri::Kernel::fhd), mri::nufft_sums(mri::toeplitz_problem(p), mri::Kernel::q)};
}

TEST(ReconGpu, ToeplitzProductEqualsCpuOnTiny) {
  const Sums s = sums_of("tiny");
  const cvec rho = random_vector(size_t(s.n[0]) * s.n[1] * s.n[2], 11);
  const cvec want = cpu_normal(s.n, s.q, 0, rho);
  cvec got;
  mri::GpuNormalOperator(s.n, s.q, 0).apply(rho, got);
  EXPECT_LT(rel_diff(got, want), 1e-12);
}

// A grid of three different sides and a Q of random values: an axis swapped or a shift of the
// circulant's column by the wrong side would show here and not on a cube.
TEST(ReconGpu, NormalOperatorEqualsCpuOnUnevenGrid) {
  const std::array<int, 3> n{6, 4, 5};
  const cvec q = random_vector(size_t(8) * 12 * 10, 12);
  const cvec rho = random_vector(size_t(6) * 4 * 5, 13);
  for (double lambda : {0.0, 0.5, 3000.0}) {
    const cvec want = cpu_normal(n, q, lambda, rho);
    cvec got;
    mri::GpuNormalOperator(n, q, lambda).apply(rho, got);
    EXPECT_LT(rel_diff(got, want), 1e-12) << "lambda " << lambda;
  }
}

// The plan made once and the kernel replaced (mri_recon makes the operator before Q exists):
// an operator whose kernel was set twice gives the products of one made with the second Q
// alone, bit for bit (the same plan, the same arithmetic), and one with no kernel refuses.
TEST(ReconGpu, KernelSetAfterThePlanAndReplaced) {
  const std::array<int, 3> n{6, 4, 5};
  const cvec q1 = random_vector(size_t(8) * 12 * 10, 16), q2 = random_vector(size_t(8) * 12 * 10, 17);
  const cvec rho = random_vector(size_t(6) * 4 * 5, 18);
  mri::GpuNormalOperator made_first(n, 0.5);
  cvec got, want;
  EXPECT_THROW(made_first.apply(rho, got), std::logic_error);
  EXPECT_THROW(mri::conjugate_gradient_gpu(made_first, rho, 2), std::logic_error);
  made_first.set_kernel(q1);
  made_first.set_kernel(q2);
  made_first.apply(rho, got);
  mri::GpuNormalOperator(n, q2, 0.5).apply(rho, want);
  EXPECT_EQ(got, want);
  EXPECT_LT(rel_diff(got, cpu_normal(n, q2, 0.5, rho)), 1e-12);
  const auto& t = made_first.setup_timing();
  EXPECT_GE(t.plan_ms, 0);
  EXPECT_GE(t.upload_ms, 0);
  EXPECT_GE(t.transform_ms, 0);
}

// The regularizer's share alone (Q = 0): lambda W^H W, every boundary case of the differences.
TEST(ReconGpu, RegularizerEqualsCpu) {
  const std::array<int, 3> n{5, 3, 4};
  const cvec q(size_t(10) * 6 * 8, cplx(0));
  const cvec rho = random_vector(size_t(5) * 3 * 4, 14);
  cvec want, got;
  mri::regularizer(n, rho, want);
  mri::GpuNormalOperator(n, q, 1.0).apply(rho, got);
  EXPECT_LT(rel_diff(got, want), 1e-14);
}

void expect_same_cg(const std::string& size, int iterations) {
  const double lambda = 3000;
  const Sums s = sums_of(size);
  const mri::Toeplitz t(s.n, s.q);
  const mri::CgResult cpu = mri::conjugate_gradient(t, lambda, s.fhd, iterations);
  const mri::GpuNormalOperator a(s.n, s.q, lambda);
  int calls = 0;
  const mri::CgResult gpu = mri::conjugate_gradient_gpu(a, s.fhd, iterations, [&](int it, double) { EXPECT_EQ(it, ++calls); });
  EXPECT_EQ(calls, iterations);
  ASSERT_EQ(gpu.residuals.size(), cpu.residuals.size());
  for (size_t i = 0; i < cpu.residuals.size(); ++i)
    EXPECT_NEAR(gpu.residuals[i], cpu.residuals[i], 1e-6 * cpu.residuals[i]) << size << " iteration " << i + 1;
  EXPECT_LT(rel_diff(gpu.rho, cpu.rho), 1e-9) << size;
  // The solver converges at all (not two equal failures): the residual falls by 1e3 or more.
  EXPECT_LT(cpu.residuals.back(), 1e-3) << size;
}

TEST(ReconGpu, ConjugateGradientGivesCpuImageOnTiny) { expect_same_cg("tiny", 20); }
TEST(ReconGpu, ConjugateGradientGivesCpuImageOnSmall) { expect_same_cg("small", 50); }

// The reductions have a fixed shape: two runs give the same bits.
TEST(ReconGpu, ConjugateGradientIsDeterministic) {
  const Sums s = sums_of("tiny");
  const mri::GpuNormalOperator a(s.n, s.q, 3000);
  const mri::CgResult first = mri::conjugate_gradient_gpu(a, s.fhd, 20);
  const mri::CgResult second = mri::conjugate_gradient_gpu(a, s.fhd, 20);
  EXPECT_EQ(first.residuals, second.residuals);
  EXPECT_EQ(first.rho, second.rho);
}

// b = 0 is solved at once, as on the CPU: every residual 0, the image 0.
TEST(ReconGpu, ZeroRightHandSide) {
  const std::array<int, 3> n{4, 4, 4};
  const cvec q = random_vector(size_t(8) * 8 * 8, 15);
  const mri::GpuNormalOperator a(n, q, 1.0);
  const mri::CgResult r = mri::conjugate_gradient_gpu(a, cvec(64, cplx(0)), 3);
  EXPECT_EQ(r.residuals, std::vector<double>(3, 0.0));
  EXPECT_EQ(r.rho, cvec(64, cplx(0)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (!mri::gpu_solver_built()) throw core::NoGpuError("built without the GPU solver (CUDA and cuFFT)");
    core::require_gpu(0);
  } catch (const core::NoGpuError& e) {
    fprintf(stderr, "mri_recon_gpu_tests: skipped: %s\n", e.what());
    return core::kNoGpu;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
