// core::Fields, the steps' JSON-free describe() handle: every value lands as the library
// stores the same C++ value (so records keep their types when steps moved from
// params["x"] = v to params.set("x", v)), and nesting makes the shapes the steps write.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/fields.hpp"

namespace {

// The record's field as params["v"] = value writes it, and as Fields::set writes it.
template <class T>
void expect_stored_alike(T value) {
  nlohmann::json direct = nlohmann::json::object(), through = nlohmann::json::object();
  direct["v"] = value;
  core::Fields(through).set("v", value);
  EXPECT_EQ(direct["v"].type_name(), std::string(through["v"].type_name()));
  EXPECT_EQ(direct["v"].is_number_unsigned(), through["v"].is_number_unsigned());
  EXPECT_EQ(direct.dump(), through.dump());
}

TEST(Fields, EachValueTypeLandsAsTheLibraryStoresIt) {
  expect_stored_alike(int(-3));
  expect_stored_alike(long(1) << 40);
  expect_stored_alike(size_t(49152));
  expect_stored_alike(uint64_t(1) << 33);
  expect_stored_alike(unsigned(7));
  expect_stored_alike(true);
  expect_stored_alike(false);
  expect_stored_alike(0.1f);  // widened to double, as the library does
  expect_stored_alike(2.5);
  expect_stored_alike("FMA (fp32), NCHW");
  expect_stored_alike(std::string("128x128"));
}

TEST(Fields, IntegersStayIntegersAndBoolsStayBools) {
  nlohmann::json j;
  core::Fields(j).set("threads", 256).set("bytes", size_t(1) << 20).set("deterministic", true).set("ms", 1.0);
  EXPECT_TRUE(j["threads"].is_number_integer());
  EXPECT_FALSE(j["threads"].is_number_unsigned());
  EXPECT_TRUE(j["bytes"].is_number_unsigned());
  EXPECT_TRUE(j["deterministic"].is_boolean());
  EXPECT_TRUE(j["ms"].is_number_float());
}

TEST(Fields, ObjectAndAppendNestAsTheStepsWroteThem) {
  nlohmann::json j = nlohmann::json::object();
  core::Fields params(j);
  for (int l = 0; l < 2; ++l) params.append("gemm").set("forward", l ? "64x64" : "128x128").set("splits", l + 1);
  core::Fields conv1 = params.object("algorithms").object("conv1");
  conv1.object("forward").set("algo", "implicit_gemm");
  params.object("phase_ms_per_gulp");  // an empty object stays in the record
  const nlohmann::json expected = {
      {"gemm", {{{"forward", "128x128"}, {"splits", 1}}, {{"forward", "64x64"}, {"splits", 2}}}},
      {"algorithms", {{"conv1", {{"forward", {{"algo", "implicit_gemm"}}}}}}},
      {"phase_ms_per_gulp", nlohmann::json::object()}};
  EXPECT_EQ(j, expected);
  EXPECT_EQ(j.dump(), expected.dump());
}

TEST(Fields, ANullValueBecomesAnObject) {
  nlohmann::json j;
  core::Fields f(j);
  EXPECT_TRUE(j.is_object());
  EXPECT_TRUE(j.empty());
}

}  // namespace
