// The MRI problem: phantom transform, generator, reference, file formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "npy.hpp"
#include "phantom.hpp"
#include "portable.hpp"
#include "problem.hpp"
#include "reference.hpp"
#include "validation.hpp"

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
  EXPECT_EQ(v.size(), 2000u);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  EXPECT_EQ(std::adjacent_find(v.begin(), v.end()), v.end()) << "voxels are distinct";
  EXPECT_EQ(v, mri::reference_voxels(small, 1)) << "the sample is seeded";
}

// F^H d of the tiny problem computed exactly passes; a perturbed copy fails.
TEST(Validation, RejectsAWrongOutput) {
  const auto p = mri::generate("tiny", 2, 0.0);
  const auto ref = mri::reference(p, mri::Kernel::fhd, mri::reference_voxels(p, 1));
  std::vector<float> re(p.voxels()), im(p.voxels());
  for (size_t i = 0; i < re.size(); ++i) { re[i] = float(ref[i].real()); im[i] = float(ref[i].imag()); }
  EXPECT_TRUE(mri::validate(p, mri::Kernel::fhd, mri::Accuracy::exact, re.data(), im.data(), 1).pass);
  re[17] += 0.05f * std::abs(float(ref[17].real())) + 1.0f;  // one wrong voxel
  EXPECT_FALSE(mri::validate(p, mri::Kernel::fhd, mri::Accuracy::exact, re.data(), im.data(), 1).pass);
  re[17] = std::nanf("");
  EXPECT_FALSE(mri::validate(p, mri::Kernel::fhd, mri::Accuracy::fast, re.data(), im.data(), 1).pass)
      << "NaN fails even the loosest class";
}

// Without a GPU the test suite still has to prove that validation catches the bugs a GPU
// step can make. What such steps would return is built here from the double reference, on
// `tiny` with the seed the step tests use (1), for both kernels and both accuracy classes.
struct Output {
  std::vector<float> re, im;
};

Output exact_output(const mri::Problem& p, mri::Kernel kernel) {
  std::vector<size_t> all(p.voxels());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto ref = mri::reference(p, kernel, all);
  Output o{std::vector<float>(all.size()), std::vector<float>(all.size())};
  for (size_t i = 0; i < all.size(); ++i) { o.re[i] = float(ref[i].real()); o.im[i] = float(ref[i].imag()); }
  return o;
}

bool passes(const mri::Problem& p, mri::Kernel kernel, mri::Accuracy a, const Output& o) {
  return mri::validate(p, kernel, a, o.re.data(), o.im.data(), 1).pass;
}

// A chunked step that forgets its partial last chunk (chunks of 1,000: the last 24 samples).
TEST(Validation, RejectsAnOutputThatDroppedTheLastSamples) {
  const auto p = mri::generate("tiny", 1, 0.0);
  auto cut = p;
  for (auto* v : {&cut.kx, &cut.ky, &cut.kz, &cut.phiR, &cut.phiI, &cut.dR, &cut.dI}) v->resize(p.samples() - 24);
  for (mri::Kernel kernel : {mri::Kernel::fhd, mri::Kernel::q}) {
    const Output full = exact_output(p, kernel), dropped = exact_output(cut, kernel);
    for (mri::Accuracy a : {mri::Accuracy::exact, mri::Accuracy::fast}) {
      EXPECT_TRUE(passes(p, kernel, a, full)) << mri::kernel_name(kernel) << " " << mri::accuracy_name(a);
      EXPECT_FALSE(passes(p, kernel, a, dropped)) << mri::kernel_name(kernel) << " " << mri::accuracy_name(a);
    }
  }
}

// A step whose bounds miss the last voxel (an off-by-one in the grid or the guard).
TEST(Validation, RejectsAnOutputThatLeftTheLastVoxelAtZero) {
  const auto p = mri::generate("tiny", 1, 0.0);
  for (mri::Kernel kernel : {mri::Kernel::fhd, mri::Kernel::q}) {
    Output o = exact_output(p, kernel);
    o.re.back() = 0;
    o.im.back() = 0;
    for (mri::Accuracy a : {mri::Accuracy::exact, mri::Accuracy::fast})
      EXPECT_FALSE(passes(p, kernel, a, o)) << mri::kernel_name(kernel) << " " << mri::accuracy_name(a);
  }
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
