// The MRI problem: phantom transform, generator, reference, file formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "mri/phantom.hpp"
#include "core/portable.hpp"
#include "mri/problem.hpp"
#include "mri/reference.hpp"
#include "mri/validation.hpp"
#include "mri/weights.hpp"

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("stepwise_mri_" + std::to_string(::getpid()) + "_" + name)).string();
}

// The analytic transform of the ellipsoids against a numerical DFT of the phantom
// rasterized on a fine grid, at low frequencies where rasterization is accurate.
TEST(Phantom, AnalyticTransformMatchesRasterizedDft) {
  constexpr int n = 96;
  const double h = 1.0 / n;
  std::vector<float> f(size_t(n) * n * n);
  for (int iz = 0; iz < n; ++iz)
    for (int iy = 0; iy < n; ++iy)
      for (int ix = 0; ix < n; ++ix)
        f[(size_t(iz) * n + iy) * n + ix] = float(mri::phantom_density(
            -0.5 + (ix + 0.5) * h, -0.5 + (iy + 0.5) * h, -0.5 + (iz + 0.5) * h));
  const double scale = std::abs(mri::phantom_transform(0, 0, 0));
  const double ks[][3] = {{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {2, -1, 1}, {-3, 2, 0}};
  for (const auto& k : ks) {
    std::complex<double> dft = 0;
    for (int iz = 0; iz < n; ++iz)
      for (int iy = 0; iy < n; ++iy)
        for (int ix = 0; ix < n; ++ix) {
          const float v = f[(size_t(iz) * n + iy) * n + ix];
          if (v == 0) continue;
          const double x = -0.5 + (ix + 0.5) * h, y = -0.5 + (iy + 0.5) * h, z = -0.5 + (iz + 0.5) * h;
          dft += double(v) * std::polar(h * h * h, -2 * core::kPi * (k[0] * x + k[1] * y + k[2] * z));
        }
    const std::complex<double> exact = mri::phantom_transform(k[0], k[1], k[2]);
    EXPECT_LT(std::abs(dft - exact) / scale, 5e-3) << "k = (" << k[0] << ", " << k[1] << ", " << k[2] << ")";
  }
}

TEST(Phantom, TransformAtZeroIsTheIntegral) {
  double integral = 0;
  for (const auto& e : mri::shepp_logan_3d()) integral += e.rho * 4.0 / 3 * core::kPi * e.a * e.b * e.c;
  EXPECT_NEAR(mri::phantom_transform(0, 0, 0).real(), integral, 1e-12);
  EXPECT_NEAR(mri::phantom_transform(0, 0, 0).imag(), 0, 1e-12);
}

TEST(Generator, IsDeterministicPerSeed) {
  const auto a = mri::generate("tiny", 7, 0.0), b = mri::generate("tiny", 7, 0.0), c = mri::generate("tiny", 8, 0.0);
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_NE(a.digest(), c.digest());
  EXPECT_EQ(a.samples(), 1024u);
  EXPECT_EQ(a.voxels(), 512u);
  EXPECT_EQ(a.grid[0], 8);
}

TEST(Generator, TrajectoryStaysInsideTheGridBandwidth) {
  const auto p = mri::generate("small", 1, 0.0);
  for (size_t m = 0; m < p.samples(); ++m) {
    ASSERT_LE(std::hypot(p.kx[m], p.ky[m]), 16.0f);
    ASSERT_LE(std::abs(p.kz[m]), 16.0f);
  }
}

TEST(Generator, NoiseChangesTheDataOnly) {
  const auto clean = mri::generate("tiny", 3, 0.0), noisy = mri::generate("tiny", 3, 0.01);
  EXPECT_EQ(clean.kx, noisy.kx);
  EXPECT_NE(clean.dR, noisy.dR);
  EXPECT_THROW(mri::generate("tiny", 3, -1.0), core::UsageError);
}

TEST(Generator, UnknownSizeIsUsageError) {
  EXPECT_THROW(mri::generate("huge", 1, 0.0), core::UsageError);
}

// The reference against a brute-force evaluation written differently: complex exponentials
// in long double, summed over samples for a handful of voxels.
TEST(Reference, MatchesBruteForceOnTinyProblem) {
  const auto p = mri::generate("tiny", 5, 0.0);
  const std::vector<size_t> voxels = {0, 7, 100, 511};
  for (mri::Kernel kernel : {mri::Kernel::fhd, mri::Kernel::q}) {
    const auto ref = mri::reference(p, kernel, voxels);
    for (size_t i = 0; i < voxels.size(); ++i) {
      const size_t n = voxels[i];
      std::complex<long double> sum = 0;
      for (size_t m = 0; m < p.samples(); ++m) {
        const std::complex<long double> phi(p.phiR[m], p.phiI[m]), d(p.dR[m], p.dI[m]);
        const std::complex<long double> w = kernel == mri::Kernel::q ? std::complex<long double>(std::norm(phi)) : std::conj(phi) * d;
        const long double arg = 2 * 3.14159265358979323846264338327950288L *
                                ((long double)p.kx[m] * p.x[n] + (long double)p.ky[m] * p.y[n] + (long double)p.kz[m] * p.z[n]);
        sum += w * std::exp(std::complex<long double>(0, arg));
      }
      EXPECT_NEAR(ref[i].real(), double(sum.real()), 1e-9 * std::abs(sum));
      EXPECT_NEAR(ref[i].imag(), double(sum.imag()), 1e-9 * std::abs(sum));
    }
  }
}

TEST(Reference, SamplesVoxelsOnlyForLargeProblems) {
  const auto tiny = mri::generate("tiny", 1, 0.0);
  EXPECT_EQ(mri::reference_voxels(tiny, 1).size(), tiny.voxels());
  const auto small = mri::generate("small", 1, 0.0);
  const auto v = mri::reference_voxels(small, 1);
  EXPECT_EQ(v.size(), mri::edge_voxels(small).size() + 2000) << "the edges plus 2,000 drawn voxels";
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  EXPECT_EQ(std::adjacent_find(v.begin(), v.end()), v.end()) << "voxels are distinct";
  EXPECT_EQ(v, mri::reference_voxels(small, 1)) << "the sample is seeded";
  EXPECT_NE(v, mri::reference_voxels(small, 2));
}

// The sample holds the voxels where a GPU step goes wrong first, on every grid size.
TEST(Reference, SampleHoldsEveryBlockAndGridEdge) {
  for (const char* size : {"small", "large"}) {
    const auto p = mri::generate(size, 1, 0.0, 1000);
    const auto v = mri::reference_voxels(p, 7);
    const auto has = [&](size_t n) { return std::binary_search(v.begin(), v.end(), n); };
    const size_t N = p.voxels(), nx = p.grid[0];
    EXPECT_TRUE(has(0) && has(N - 1)) << size;
    for (size_t g : {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 16384}) {
      EXPECT_TRUE(has(g - 1) && has(g)) << size << ": the first group of " << g << " ends, the second begins";
      const size_t last = (N - 1) / g * g;
      EXPECT_TRUE(has(last - 1) && has(last)) << size << ": the last group of " << g << " begins at " << last;
    }
    for (size_t n = N - 1024; n < N; n += 32) EXPECT_TRUE(has(n) && has(n + 31)) << size << ": warp at " << n;
    for (size_t plane = 0; plane < nx; ++plane) EXPECT_TRUE(has((plane + 1) * nx * nx - 1)) << size << ": plane " << plane << " ends";
    for (size_t row = 0; row < nx; ++row) EXPECT_TRUE(has((row + 1) * nx - 1)) << size << ": row " << row << " of the first plane ends";
  }
  // The sample depends on the voxels and the seed, not on the samples: a --samples prefix is
  // checked where the whole problem is.
  EXPECT_EQ(mri::reference_voxels(mri::generate("large", 1, 0.0, 1000), 1),
            mri::reference_voxels(mri::generate("large", 1, 0.0, 65536), 1));
}

// ---- Validation: where its limits lie and which bugs they reject ------------------------------
//
// Without a GPU the suite still has to prove that --check catches the bugs a GPU step makes.
// What such a step would return is built here from the CPU double reference, at exactly the
// voxels validate() compares (mri::expected uses the validator's own sample; the rest of the
// output is never read), on three problems: tiny (every voxel), small, and large's full voxel
// grid with its first 65,536 samples, which is compared on the same voxels as the whole of
// large (the sample depends on the voxels and the seed only) at 1/49 of the reference's cost.
// Seed 1, as the step tests use.

struct Bench {
  mri::Problem p;
  mri::Kernel kernel;
  mri::Expected e;
};

// One reference per problem and kernel for every test below.
const Bench& bench(const std::string& size, mri::Kernel kernel) {
  static std::map<std::pair<std::string, mri::Kernel>, std::unique_ptr<Bench>> cache;
  auto& b = cache[{size, kernel}];
  if (!b) {
    auto p = size == "large" ? mri::generate("large", 1, 0.0, 65536) : mri::generate(size, 1, 0.0);
    auto e = mri::expected(p, kernel, 1);
    b.reset(new Bench{std::move(p), kernel, std::move(e)});
  }
  return *b;
}

using Values = std::vector<std::complex<double>>;  // one per compared voxel

mri::Verdict judge(const Bench& b, mri::Accuracy a, const Values& v) {
  std::vector<float> re(b.p.voxels(), 0.0f), im(b.p.voxels(), 0.0f);
  for (size_t i = 0; i < v.size(); ++i) {
    re[b.e.voxels[i]] = float(v[i].real());
    im[b.e.voxels[i]] = float(v[i].imag());
  }
  return mri::validate(b.p, b.kernel, a, b.e, re.data(), im.data());
}

std::string describe(const mri::Verdict& v) {
  char text[256];
  snprintf(text, sizeof text, "rel_l2 %.3g (limit %.3g), k-space residual %.3g (limit %.3g), limits of %s",
           v.metrics.rel_l2, v.threshold, v.kspace, v.kspace_limit, v.limits.c_str());
  return text;
}

// What the samples `ms` contribute at the compared voxels: a step that skips them returns
// the reference minus this.
Values contribution(const Bench& b, const std::vector<size_t>& ms) {
  mri::Problem q = b.p;
  for (auto* a : {&q.kx, &q.ky, &q.kz, &q.phiR, &q.phiI, &q.dR, &q.dI}) {
    std::vector<float> kept;
    for (size_t m : ms) kept.push_back((*a)[m]);
    *a = kept;
  }
  return mri::reference(q, b.kernel, b.e.voxels);
}

Values without(const Bench& b, const std::vector<size_t>& ms) {
  Values v = b.e.values;
  const Values c = contribution(b, ms);
  for (size_t i = 0; i < v.size(); ++i) v[i] -= c[i];
  return v;
}

Values zero_from(const Bench& b, size_t first) {
  Values v = b.e.values;
  for (size_t i = 0; i < v.size(); ++i)
    if (b.e.voxels[i] >= first) v[i] = 0;
  return v;
}

std::vector<size_t> range(size_t first, size_t end) {
  std::vector<size_t> r;
  for (size_t m = first; m < end; ++m) r.push_back(m);
  return r;
}

// 03's loop with __sincosf in place of sinf/cosf, as the SFU computes it: the float phase
// times 1/(2 pi), rounded toward zero, then sin and cos of that fraction of a turn (modelled
// as exact). The truncation shrinks every phase a little, the same way for every sample:
// an error that adds up in k-space where rounding does not (steps/mri/README.md).
Values sfu_output(const Bench& b) {
  const mri::Problem& p = b.p;
  const bool q = b.kernel == mri::Kernel::q;
  const size_t M = p.samples();
  std::vector<float> rMu(M), iMu(M);
  for (size_t m = 0; m < M; ++m)
    mri::sample_weight(q, p.phiR[m], p.phiI[m], q ? 0.f : p.dR[m], q ? 0.f : p.dI[m], rMu[m], iMu[m]);
  Values out(b.e.voxels.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t n = b.e.voxels[i];
    float re = 0, im = 0;
    for (size_t m = 0; m < M; ++m) {
      const float phase = 2 * core::kPiF * (p.kx[m] * p.x[n] + p.ky[m] * p.y[n] + p.kz[m] * p.z[n]);
      const double exact = double(phase) * double(0.15915494309189535f);
      float turns = float(exact);
      if (std::abs(double(turns)) > std::abs(exact)) turns = std::nextafter(turns, 0.0f);
      const double fraction = double(turns) - std::nearbyint(double(turns));
      const float c = float(std::cos(2 * core::kPi * fraction)), s = float(std::sin(2 * core::kPi * fraction));
      re += rMu[m] * c - iMu[m] * s;
      im += iMu[m] * c + rMu[m] * s;
    }
    out[i] = {re, im};
  }
  return out;
}

struct Case {
  std::string size;
  mri::Kernel kernel;
};
std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.size + "_" + mri::kernel_name(info.param.kernel);
}
class ValidationAt : public testing::TestWithParam<Case> {
 protected:
  const Bench& b() const { return bench(GetParam().size, GetParam().kernel); }
};
INSTANTIATE_TEST_SUITE_P(Sizes, ValidationAt,
                         testing::Values(Case{"tiny", mri::Kernel::fhd}, Case{"tiny", mri::Kernel::q},
                                         Case{"small", mri::Kernel::fhd}, Case{"small", mri::Kernel::q},
                                         Case{"large", mri::Kernel::fhd}, Case{"large", mri::Kernel::q}),
                         case_name);

// The right answer, rounded to float, passes the tighter class (and so both: see
// ExactLimitsAreNeverLooser).
TEST_P(ValidationAt, AcceptsTheReferenceRoundedToFloat) {
  const auto v = judge(b(), mri::Accuracy::exact, b().e.values);
  EXPECT_TRUE(v.pass) << describe(v);
  EXPECT_NE(v.limits, "unmeasured") << "the tests run on the problems the limits were measured on";
}

// Each bug a step can make, with its output otherwise exact: every one fails the looser class
// (and so both).
TEST_P(ValidationAt, RejectsEveryDefect) {
  const Bench& bb = b();
  const size_t N = bb.p.voxels(), M = bb.p.samples();
  const std::vector<std::pair<std::string, Values>> defects = {
      {"last voxel left at zero (a guard or grid one short)", zero_from(bb, N - 1)},
      {"last 128 voxels left at zero (a last block of 128 never launched)", zero_from(bb, N - 128)},
      {"last 256 voxels left at zero (a last block of 256 never launched)", zero_from(bb, N - 256)},
      {"last sample missing (m < numK - 1)", without(bb, {M - 1})},
      {"first sample missing (m = 1 to numK)", without(bb, {0})},
      {"last sample of the first half missing (a chunk's last sample)", without(bb, {M / 2 - 1})},
      {"last 24 samples missing (the partial last chunk of chunks of 1,000)", without(bb, range(M - 24, M))},
      {"last 1,024 samples missing (a whole last chunk)", without(bb, range(M - 1024, M))},
  };
  for (const auto& [what, values] : defects) {
    const auto v = judge(bb, mri::Accuracy::fast, values);
    EXPECT_FALSE(v.pass) << what << ": " << describe(v);
  }
}

// The tolerance class (12_es_kernel) is checked against what the step was asked for, on any
// problem, and asks for it: without a tolerance the harness has made a mistake.
TEST(Validation, ToleranceClassTakesTheStepsTolerance) {
  const mri::Problem p = mri::generate("tiny", 1, 0.0);
  for (double t : {1e-2, 1e-4, 1e-6}) {
    const mri::Limits l = mri::limits_for(p, mri::Kernel::fhd, mri::Accuracy::tolerance, t);
    EXPECT_EQ(l.rel_l2, t);
    EXPECT_EQ(l.kspace, t);
  }
  EXPECT_THROW(mri::limits_for(p, mri::Kernel::fhd, mri::Accuracy::tolerance), std::logic_error);
  EXPECT_STREQ(mri::accuracy_name(mri::Accuracy::tolerance), "tolerance");
}

// Both limits sit where the table says: an error 5 % under each passes, 5 % over fails, and
// fails on that measure. rel_l2 is probed with one wrong voxel (its k-space residual is
// rel_l2 / sqrt(voxels), far under its limit), the k-space residual with one sample's plane
// wave added at every voxel (its rel_l2 equals its residual, under the rel_l2 limit).
TEST_P(ValidationAt, LimitsLieWhereTheTableSays) {
  const Bench& bb = b();
  double ref2 = 0;
  for (const auto& r : bb.e.values) ref2 += std::norm(r);
  const double norm = std::sqrt(ref2), rms = std::sqrt(ref2 / double(bb.e.values.size()));
  const size_t V = bb.e.values.size(), one = V / 2, m0 = bb.p.samples() - 1;
  for (mri::Accuracy a : {mri::Accuracy::exact, mri::Accuracy::fast}) {
    const mri::Limits limits = mri::limits_for(bb.p, bb.kernel, a);
    ASSERT_LT(limits.kspace * 1.05, limits.rel_l2) << "a plane wave at the k-space limit must stay inside the rel_l2 limit";
    for (double f : {0.95, 1.05}) {
      Values v = bb.e.values;
      v[one] += f * limits.rel_l2 * norm;
      const auto wrong_voxel = judge(bb, a, v);
      EXPECT_EQ(wrong_voxel.pass, f < 1) << mri::accuracy_name(a) << ", one voxel at " << f << " x the rel_l2 limit: " << describe(wrong_voxel);
      EXPECT_LE(wrong_voxel.kspace, wrong_voxel.kspace_limit) << describe(wrong_voxel);

      v = bb.e.values;
      for (size_t i = 0; i < V; ++i) {
        const size_t n = bb.e.voxels[i];
        const double phase = 2 * core::kPi * (double(bb.p.kx[m0]) * bb.p.x[n] + double(bb.p.ky[m0]) * bb.p.y[n] + double(bb.p.kz[m0]) * bb.p.z[n]);
        v[i] += std::polar(f * limits.kspace * rms, phase);
      }
      const auto wave = judge(bb, a, v);
      EXPECT_EQ(wave.pass, f < 1) << mri::accuracy_name(a) << ", a plane wave at " << f << " x the k-space limit: " << describe(wave);
      EXPECT_LE(wave.metrics.rel_l2, wave.threshold) << describe(wave);
    }
  }
}

// 03 with __sincosf by mistake: the fast class accepts it (it is 07's arithmetic) on every
// problem. The exact class rejects it where the output can tell: Q on small, where the
// truncated phases add up at k = 0 to 15 times the k-space residual of correct exact
// arithmetic. Elsewhere (F^H d everywhere, Q on tiny and large) the SFU's error hides in the
// rounding of the phase itself (steps/mri/README.md, "Validation").
TEST_P(ValidationAt, SfuSinCosPassesAsFastAndFailsAsExactWhereVisible) {
  const Values out = sfu_output(b());
  const auto fast = judge(b(), mri::Accuracy::fast, out);
  EXPECT_TRUE(fast.pass) << describe(fast);
  if (GetParam().size == "small" && GetParam().kernel == mri::Kernel::q) {
    const auto exact = judge(b(), mri::Accuracy::exact, out);
    EXPECT_FALSE(exact.pass) << describe(exact);
  }
}

TEST(Validation, ExactLimitsAreNeverLooser) {
  for (auto shape : std::vector<std::pair<size_t, size_t>>{{512, 1024}, {32768, 32768}, {262144, 65536}, {262144, 3211264}, {100, 100}}) {
    mri::Problem p;
    p.x.resize(shape.first);
    p.kx.resize(shape.second);
    for (mri::Kernel k : {mri::Kernel::fhd, mri::Kernel::q}) {
      const auto exact = mri::limits_for(p, k, mri::Accuracy::exact), fast = mri::limits_for(p, k, mri::Accuracy::fast);
      EXPECT_LE(exact.rel_l2, fast.rel_l2) << exact.problem;
      EXPECT_LE(exact.kspace, fast.kspace) << exact.problem;
    }
  }
}

TEST(Validation, NanFailsEvenTheLoosestClass) {
  const Bench& bb = bench("tiny", mri::Kernel::fhd);
  Values v = bb.e.values;
  v[17] = {std::nan(""), 0.0};
  EXPECT_FALSE(judge(bb, mri::Accuracy::fast, v).pass);
}

TEST(ProblemFolder, RoundTrips) {
  const auto p = mri::generate("tiny", 4, 0.0);
  const std::string dir = temp_path("folder");
  mri::save_folder(p, dir);
  const auto q = mri::load_folder(dir);
  EXPECT_EQ(q.digest(), p.digest());
  EXPECT_EQ(q.grid, p.grid);
  std::filesystem::remove_all(dir);
}

TEST(ProblemFolder, RejectsWrongShapeNamingTheFile) {
  auto p = mri::generate("tiny", 4, 0.0);
  const std::string dir = temp_path("badshape");
  mri::save_folder(p, dir);
  const std::vector<float> short_kx(10, 0.0f);
  core::write_npy<float>(dir + "/ky.npy", {10}, short_kx.data());
  try {
    mri::load_folder(dir);
    FAIL() << "a 10-entry ky.npy was accepted for 1024 samples";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ky.npy: wrong shape"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Parboil, ReaderReadsWhatTheWriterWrote) {
  auto p = mri::generate("tiny", 6, 0.0);
  const std::string path = temp_path("parboil.bin");
  mri::save_parboil(p, path);
  const auto q = mri::load_parboil(path);
  EXPECT_EQ(q.kx, p.kx);
  EXPECT_EQ(q.kz, p.kz);
  EXPECT_EQ(q.phiI, p.phiI);
  EXPECT_EQ(q.z, p.z);
  EXPECT_FALSE(q.has_data()) << "mri-q inputs carry no k-space data";
  EXPECT_EQ(q.params["samples"], 1024);

  // Truncated by one float: refused, naming the file and the sizes.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  try {
    mri::load_parboil(path);
    FAIL() << "a truncated Parboil file was accepted";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

// The voxel grid is found from the coordinates alone, whatever format carried them.
TEST(Grid, GeneratedVoxelsAreAGrid) {
  EXPECT_EQ(mri::generate("tiny", 1, 0.0).grid, (std::array<int, 3>{8, 8, 8}));
  EXPECT_EQ(mri::generate("small", 1, 0.0, 10).grid, (std::array<int, 3>{32, 32, 32}));
}

TEST(Grid, AGridWrittenInParboilFormatIsStillAGrid) {
  const auto p = mri::generate("tiny", 6, 0.0);
  const std::string path = temp_path("grid.bin");
  mri::save_parboil(p, path);
  EXPECT_EQ(mri::load_parboil(path).grid, (std::array<int, 3>{8, 8, 8}));
  std::remove(path.c_str());
}

// x = (ix - nx/2)/nx with integer halves, y and z alike, x fastest.
void grid_coordinates(int nx, int ny, int nz, std::vector<float>& x, std::vector<float>& y, std::vector<float>& z) {
  x.clear(); y.clear(); z.clear();
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix) {
        x.push_back(float(ix - nx / 2) / nx);
        y.push_back(float(iy - ny / 2) / ny);
        z.push_back(float(iz - nz / 2) / nz);
      }
}

TEST(Grid, UnequalAndOddSidesAreFound) {
  std::vector<float> x, y, z;
  grid_coordinates(5, 4, 3, x, y, z);
  EXPECT_EQ(mri::find_grid(x, y, z), (std::array<int, 3>{5, 4, 3}));
  grid_coordinates(6, 1, 1, x, y, z);
  EXPECT_EQ(mri::find_grid(x, y, z), (std::array<int, 3>{6, 1, 1}));
  grid_coordinates(4, 4, 4, x, y, z);
  x[17] = std::nextafter(x[17], 1.0f);  // another formula's rounding: still the grid
  EXPECT_EQ(mri::find_grid(x, y, z), (std::array<int, 3>{4, 4, 4}));
}

TEST(Grid, PerturbedOrReorderedVoxelsAreNotAGrid) {
  const std::array<int, 3> none{0, 0, 0};
  const auto p = mri::generate("tiny", 1, 0.0);
  auto x = p.x;
  x[100] += 1e-4f;
  EXPECT_EQ(mri::find_grid(x, p.y, p.z), none) << "one voxel moved";
  auto y = p.y, z = p.z;
  x = p.x;
  std::swap(x[3], x[4]);
  EXPECT_EQ(mri::find_grid(x, y, z), none) << "two voxels of a row swapped";
  // The same points with y fastest (the order of Parboil's own inputs): not the order the
  // recurrence walks.
  EXPECT_EQ(mri::find_grid(p.y, p.x, p.z), none);
  EXPECT_EQ(mri::find_grid({}, {}, {}), none);
  EXPECT_EQ(mri::find_grid(p.x, p.y, std::vector<float>(p.z.begin(), p.z.end() - 1)), none);

  // A folder whose meta.json still says "grid": 8 is judged by its coordinates.
  auto moved = p;
  moved.x[100] += 1e-4f;
  const std::string dir = temp_path("moved");
  mri::save_folder(moved, dir);
  EXPECT_EQ(mri::load_folder(dir).grid, none);
  std::filesystem::remove_all(dir);
}

// A NaN or Inf anywhere in a Parboil file is bad input naming the array, as in a folder: a step
// would otherwise run and return NaN everywhere.
TEST(Parboil, RejectsNanOrInfInEveryArray) {
  const auto p = mri::generate("tiny", 6, 0.0);
  const std::string path = temp_path("nan.bin");
  const char* names[] = {"kx", "ky", "kz", "x", "y", "z", "phiR", "phiI"};  // the file's order
  for (int a = 0; a < 8; ++a)
    for (float bad : {std::nanf(""), INFINITY}) {
      mri::Problem q = p;
      std::vector<float>* arrays[] = {&q.kx, &q.ky, &q.kz, &q.x, &q.y, &q.z, &q.phiR, &q.phiI};
      arrays[a]->back() = bad;
      mri::save_parboil(q, path);
      try {
        mri::load_parboil(path);
        ADD_FAILURE() << names[a] << " holding " << bad << " was accepted";
      } catch (const core::UsageError& e) {
        const std::string want = std::string(names[a]) + "[" + std::to_string(arrays[a]->size() - 1) + "] is " + (bad != bad ? "NaN" : "Inf");
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      }
    }
  std::remove(path.c_str());
}

TEST(Parboil, RejectsAbsurdCounts) {
  const std::string path = temp_path("absurd.bin");
  const int32_t header[2] = {-5, 100};
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(header), sizeof header);
  EXPECT_THROW(mri::load_parboil(path), core::UsageError);
  std::remove(path.c_str());
}

TEST(Parboil, OutputReaderChecksTheVoxelCount) {
  const std::string path = temp_path("parboil.out");
  const uint32_t n = 3;
  const float q[6] = {1, 2, 3, 4, 5, 6};
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&n), 4);
    out.write(reinterpret_cast<const char*>(q), sizeof q);
  }
  const auto o = mri::load_parboil_output(path, 3);
  EXPECT_EQ(o.re, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(o.im, (std::vector<float>{4, 5, 6}));
  EXPECT_THROW(mri::load_parboil_output(path, 4), core::UsageError);
  // Parboil's rule: within 1e-4 of max|ref| (or 0.2 %) passes, beyond fails.
  std::vector<float> re = o.re, im = o.im;
  re[0] += 5e-4f;
  EXPECT_TRUE(mri::validate_parboil(o, re.data(), im.data()).pass);
  re[0] += 0.1f;
  EXPECT_FALSE(mri::validate_parboil(o, re.data(), im.data()).pass);
  std::remove(path.c_str());
}

}  // namespace

namespace {
// The committed fixture datasets/mri/tiny is exactly what the generator makes for seed 1.
TEST(Fixture, CommittedTinyFolderIsTheGeneratedProblem) {
  const char* root = std::getenv("STEPWISE_SOURCE_ROOT");
  if (!root) GTEST_SKIP() << "STEPWISE_SOURCE_ROOT not set";
  const auto fixture = mri::load_folder(std::string(root) + "/datasets/mri/tiny");
  EXPECT_EQ(fixture.digest(), mri::generate("tiny", 1, 0.0).digest());
}
}  // namespace
