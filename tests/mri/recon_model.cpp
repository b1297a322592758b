// The reconstruction's problem (steps/mri/recon/recon_model.hpp): its data are the transform of
// its true image, least squares and gridding converge on that image, the blurred true image is
// the blurred phantom's box average, and the NUFFT sums equal the direct ones.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "recon/gridding.hpp"
#include "core/metrics.hpp"
#include "mri/phantom.hpp"
#include "mri/problem.hpp"
#include "recon/recon.hpp"
#include "recon/recon_model.hpp"

namespace mri {
namespace {

using cplx = std::complex<double>;

double rel_diff(const cvec& a, const cvec& b) { return core::compare(b, a).rel_l2; }

ReconSpec spec(const std::string& size, ReconData data, double blur, double noise = 0) {
  ReconSpec s;
  s.size = size;
  s.data = data;
  s.blur = blur;
  s.noise = noise;
  return s;
}

// The model's prediction of the data from an image, (F rho)_m = phi_m sum_n rho_n e^{-i 2 pi k_m . x_n}
// with rho = image / N (the scaling mri_recon undoes), against d on up to `count` samples with
// max |k_a| <= kcut (evenly spread over the problem's samples): ||F rho - d|| / ||d||.
double model_mismatch(const Problem& p, const cvec& image, double kcut, size_t count) {
  std::vector<size_t> low;
  for (size_t m = 0; m < p.samples(); ++m)
    if (std::max({std::abs(p.kx[m]), std::abs(p.ky[m]), std::abs(p.kz[m])}) <= kcut) low.push_back(m);
  const size_t stride = std::max<size_t>(1, low.size() / count);
  const double N = double(p.voxels());
  double err = 0, ref = 0;
  for (size_t i = 0; i < low.size(); i += stride) {
    const size_t m = low[i];
    cplx s = 0;
    for (size_t n = 0; n < p.voxels(); ++n)
      s += image[n] / N * std::polar(1.0, -2 * M_PI * (double(p.kx[m]) * p.x[n] + double(p.ky[m]) * p.y[n] + double(p.kz[m]) * p.z[n]));
    const cplx d(p.dR[m], p.dI[m]);
    err += std::norm(cplx(p.phiR[m], p.phiI[m]) * s - d);
    ref += std::norm(d);
  }
  return std::sqrt(err / ref);
}

// mri_recon's least squares with F^H d and Q by NUFFT.
cvec least_squares(const Problem& p, double lambda, int iterations) {
  const Toeplitz fhf(p.grid, nufft_sums(toeplitz_problem(p), Kernel::q));
  CgResult cg = conjugate_gradient(fhf, lambda, nufft_sums(p, Kernel::fhd), iterations);
  for (auto& v : cg.rho) v *= double(p.voxels());
  return cg.rho;
}

TEST(ReconProblem, ObjectDataAreTheTransformOfTheTrueImage) {
  // On the lower half of the band (max |k_a| <= n/4), where the voxel basis represents the
  // blurred object well, the model applied to the true image gives back the data. The
  // ladder's d = phi F carries the voxel box's transform once more: its image is the phantom
  // blurred by a voxel box and half a voxel off true_image()'s box (mri_recon's earlier
  // floor of 32 % on small).
  const Problem obj = recon_problem(spec("small", ReconData::object, 1));
  const double object = model_mismatch(obj, recon_true_image(obj, 1), 8, 300);
  const Problem lad = recon_problem(spec("small", ReconData::ladder, 0));
  const double ladder = model_mismatch(lad, true_image(lad), 8, 300);
  EXPECT_LT(object, 0.02);  // measured 0.8 %
  EXPECT_GT(ladder, 0.05);  // measured 9.8 %
}

TEST(ReconProblem, LeastSquaresAndGriddingReachTheTrueImage) {
  // mri_recon's default problem without noise: small, blur 1 voxel, lambda 3000, 50 iterations.
  const Problem p = recon_problem(spec("small", ReconData::object, 1));
  const cvec truth = recon_true_image(p, 1);
  const double ls = rel_diff(least_squares(p, 3000, 50), truth);
  const double grid = rel_diff(gridding_image(p, {4, 2.0}), truth);
  const double plain = rel_diff(gridding_recon(p, {4, 2.0}), truth);
  const Problem lad = recon_problem(spec("small", ReconData::ladder, 0));
  const double ladder = rel_diff(least_squares(lad, 0, 20), true_image(lad));
  EXPECT_LT(ls, 0.025);     // measured 1.5 %
  EXPECT_LT(grid, 0.06);    // 4.8 %
  EXPECT_GT(plain, 0.10);   // 15.0 %: w d without conj(phi) estimates the object at the box's corner x_n
  EXPECT_GT(ladder, 0.25);  // 32.4 %: the ladder's data against true_image(), as mri_recon had them
  EXPECT_LT(ls, grid / 2);
}

TEST(ReconTrueImage, IsTheBlurredPhantomsBoxAverage) {
  // Monte Carlo: the phantom at a uniform point of the voxel's box plus a Gaussian step of
  // `blur` voxels per axis; voxels across the skull (y = -0.46) on the central column, and the centre.
  const double blur = 1;
  const Problem p = recon_problem(spec("small", ReconData::object, blur));
  const cvec img = recon_true_image(p, blur);
  const int n = p.grid[0];
  std::mt19937_64 rng(7);
  std::normal_distribution<double> step(0, blur / n);
  std::uniform_real_distribution<double> in_box(0, 1.0 / n);
  const cvec sharp = true_image(p);
  for (int iy : {0, 1, 2, 3, 16}) {
    const size_t v = (size_t(n / 2) * n + iy) * n + n / 2;
    double s = 0;
    const int draws = 200000;
    for (int i = 0; i < draws; ++i)
      s += phantom_density(p.x[v] + in_box(rng) + step(rng), p.y[v] + in_box(rng) + step(rng), p.z[v] + in_box(rng) + step(rng));
    EXPECT_NEAR(img[v].real(), s / draws, 0.005) << "iy " << iy;  // measured within 0.0016
    EXPECT_NEAR(img[v].imag(), 0, 1e-12) << "iy " << iy;
    if (iy == 0 || iy == 1) {
      EXPECT_GT(std::abs(img[v] - sharp[v]), 0.3) << "iy " << iy;  // the skull, blurred
    }
  }
}

TEST(NufftSums, EqualTheDirectSums) {
  const Problem p = recon_problem(spec("tiny", ReconData::object, 1));
  const Problem t = toeplitz_problem(p);
  EXPECT_LT(rel_diff(nufft_sums(p, Kernel::fhd), sum_step("cpu-double", "")(p, Kernel::fhd)), 1e-6);  // 4.3e-8
  EXPECT_LT(rel_diff(nufft_sums(t, Kernel::q), sum_step("cpu-double", "")(t, Kernel::q)), 1e-6);    // 7.4e-8
}

TEST(ReconProblem, KeepsTheLaddersTrajectoryAndNoise) {
  // Object data: the ladder problem's k, phi and voxels, its noise stream, d replaced; ladder
  // data: the ladder's problem itself.
  ReconSpec s = spec("tiny", ReconData::object, 0.5, 0.01);
  s.undersample = 2;
  const Problem obj = recon_problem(s), gen = generate("tiny", 1, 0.01, 0, 2);
  EXPECT_EQ(obj.name, "tiny-R2-object-blur0.5");
  EXPECT_EQ(obj.params["data"], "object");
  EXPECT_EQ(obj.kx, gen.kx);
  EXPECT_EQ(obj.phiI, gen.phiI);
  EXPECT_EQ(obj.z, gen.z);
  EXPECT_NE(obj.dR, gen.dR);
  // The same noise: (d_object - F G) = (d_ladder - phi F) up to float rounding.
  const Problem obj0 = recon_problem(spec("tiny", ReconData::object, 0.5, 0.0)), gen0 = generate("tiny", 1, 0.0);
  s.undersample = 1;
  const Problem obj1 = recon_problem(s), gen1 = generate("tiny", 1, 0.01);
  for (size_t m = 0; m < obj1.samples(); m += 97) {
    EXPECT_NEAR(obj1.dR[m] - obj0.dR[m], gen1.dR[m] - gen0.dR[m], 1e-5) << m;
    EXPECT_NEAR(obj1.dI[m] - obj0.dI[m], gen1.dI[m] - gen0.dI[m], 1e-5) << m;
  }
  EXPECT_EQ(recon_problem(spec("tiny", ReconData::ladder, 0, 0.01)).digest(), gen1.digest());
  EXPECT_THROW(recon_problem(spec("tiny", ReconData::ladder, 1)), core::UsageError);
  EXPECT_THROW(recon_problem(spec("tiny", ReconData::object, -1)), core::UsageError);
}

TEST(ReconSumStep, KnowsNufftAndListsAllNames) {
  EXPECT_TRUE(bool(recon_sum_step("nufft", "--q-step")));
  EXPECT_TRUE(bool(recon_sum_step("cpu-single", "--q-step")));
  try {
    recon_sum_step("gpu-magic", "--q-step");
    FAIL() << "no exception";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--q-step gpu-magic: unknown step (known: cpu-double, cpu-single, nufft;"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mri
