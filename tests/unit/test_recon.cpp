// The reconstruction's pieces against dense linear algebra on problems small enough to write F
// out: the Toeplitz form of F^H F, conjugate gradient, gridding, the problem options it uses.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "recon/gridding.hpp"
#include "core/metrics.hpp"
#include "mri/problem.hpp"
#include "recon/recon.hpp"

namespace mri {
namespace {

using cplx = std::complex<double>;

// n^3 voxels on the grid convention of the generator, M samples at random k in [-n/2, n/2)^3,
// random phi and d.
Problem random_problem(int n, size_t M, uint64_t seed) {
  Problem p;
  p.name = "random";
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> k(-n / 2.0, n / 2.0), u(-1, 1);
  for (size_t m = 0; m < M; ++m) {
    p.kx.push_back(float(k(rng))); p.ky.push_back(float(k(rng))); p.kz.push_back(float(k(rng)));
    p.phiR.push_back(float(0.5 + 0.5 * std::abs(u(rng)))); p.phiI.push_back(float(0.3 * u(rng)));
    p.dR.push_back(float(u(rng))); p.dI.push_back(float(u(rng)));
  }
  for (int iz = 0; iz < n; ++iz)
    for (int iy = 0; iy < n; ++iy)
      for (int ix = 0; ix < n; ++ix) {
        p.x.push_back(float(ix - n / 2) / n); p.y.push_back(float(iy - n / 2) / n); p.z.push_back(float(iz - n / 2) / n);
      }
  p.grid = find_grid(p.x, p.y, p.z);
  return p;
}

// F_mn = phi_m e^{-i 2 pi k_m . x_n}, row-major M x N, from the float inputs in double.
std::vector<cplx> dense_f(const Problem& p) {
  const size_t M = p.samples(), N = p.voxels();
  std::vector<cplx> F(M * N);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) {
      const double arg = 2 * M_PI * (double(p.kx[m]) * p.x[n] + double(p.ky[m]) * p.y[n] + double(p.kz[m]) * p.z[n]);
      F[m * N + n] = cplx(p.phiR[m], p.phiI[m]) * std::polar(1.0, -arg);
    }
  return F;
}

// A = F^H F (N x N) and b = F^H d.
void normal_equations(const Problem& p, std::vector<cplx>& A, cvec& b) {
  const size_t M = p.samples(), N = p.voxels();
  const std::vector<cplx> F = dense_f(p);
  A.assign(N * N, 0); b.assign(N, 0);
  for (size_t m = 0; m < M; ++m) {
    const cplx d(p.dR[m], p.dI[m]);
    for (size_t i = 0; i < N; ++i) {
      const cplx fi = std::conj(F[m * N + i]);
      b[i] += fi * d;
      for (size_t j = 0; j < N; ++j) A[i * N + j] += fi * F[m * N + j];
    }
  }
}

cvec solve_dense(std::vector<cplx> A, cvec b) {  // Gaussian elimination, partial pivoting
  const size_t N = b.size();
  for (size_t c = 0; c < N; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < N; ++r) if (std::abs(A[r * N + c]) > std::abs(A[piv * N + c])) piv = r;
    for (size_t j = 0; j < N; ++j) std::swap(A[c * N + j], A[piv * N + j]);
    std::swap(b[c], b[piv]);
    for (size_t r = c + 1; r < N; ++r) {
      const cplx f = A[r * N + c] / A[c * N + c];
      for (size_t j = c; j < N; ++j) A[r * N + j] -= f * A[c * N + j];
      b[r] -= f * b[c];
    }
  }
  cvec x(N);
  for (size_t c = N; c-- > 0;) {
    cplx s = b[c];
    for (size_t j = c + 1; j < N; ++j) s -= A[c * N + j] * x[j];
    x[c] = s / A[c * N + c];
  }
  return x;
}

double rel_diff(const cvec& a, const cvec& ref) { return core::compare(ref, a).rel_l2; }

TEST(Toeplitz, EqualsDenseNormalMatrixInDouble) {
  const Problem p = random_problem(4, 300, 1);
  std::vector<cplx> A; cvec b;
  normal_equations(p, A, b);
  const Toeplitz fhf(p.grid, sum_step("cpu-double", "--q-step")(toeplitz_problem(p), Kernel::q));
  std::mt19937_64 rng(2);
  std::normal_distribution<double> g;
  cvec rho(p.voxels()), out, dense(p.voxels(), 0);
  for (auto& v : rho) v = {g(rng), g(rng)};
  fhf.apply(rho, out);
  for (size_t i = 0; i < rho.size(); ++i)
    for (size_t j = 0; j < rho.size(); ++j) dense[i] += A[i * rho.size() + j] * rho[j];
  EXPECT_LT(rel_diff(out, dense), 1e-10);
}

TEST(Toeplitz, FloatQIsWithinFloatRounding) {
  const Problem p = random_problem(4, 300, 3);
  std::vector<cplx> A; cvec b;
  normal_equations(p, A, b);
  const Toeplitz fhf(p.grid, sum_step("cpu-single", "--q-step")(toeplitz_problem(p), Kernel::q));
  cvec rho(p.voxels(), cplx(1, -0.5)), out, dense(p.voxels(), 0);
  rho[5] = 3;
  fhf.apply(rho, out);
  for (size_t i = 0; i < rho.size(); ++i)
    for (size_t j = 0; j < rho.size(); ++j) dense[i] += A[i * rho.size() + j] * rho[j];
  // 300 float terms of size 1 with phases up to 2 pi * 2: a few float epsilons each.
  EXPECT_LT(rel_diff(out, dense), 1e-4);
  EXPECT_GT(rel_diff(out, dense), 0);  // it is float: not the double answer to the bit
}

TEST(ToeplitzProblem, IsTheDoubledGridWithDoubledK) {
  const Problem p = generate("tiny", 1, 0.0);
  const Problem t = toeplitz_problem(p);
  EXPECT_EQ(t.grid, (std::array<int, 3>{16, 16, 16}));
  ASSERT_EQ(t.samples(), p.samples());
  for (size_t m = 0; m < p.samples(); ++m) ASSERT_EQ(t.kx[m], 2 * p.kx[m]);
  // Voxel jx at x' = (jx - n)/(2n): the difference (jx - n)/n after k doubles.
  EXPECT_FLOAT_EQ(2 * t.x[0], -1.0f);
  Problem scattered = p;
  scattered.grid = {0, 0, 0};
  EXPECT_THROW(toeplitz_problem(scattered), core::UsageError);
}

class ConjugateGradient : public ::testing::TestWithParam<double> {};

TEST_P(ConjugateGradient, ConvergesToTheDenseSolution) {
  const double lambda = GetParam();
  const Problem p = random_problem(4, 300, 4);
  std::vector<cplx> A; cvec b;
  normal_equations(p, A, b);
  const size_t N = p.voxels();
  // A += lambda W^H W, column by column from the operator.
  for (size_t j = 0; j < N; ++j) {
    cvec e(N, 0), col;
    e[j] = 1;
    regularizer(p.grid, e, col);
    for (size_t i = 0; i < N; ++i) A[i * N + j] += lambda * col[i];
  }
  const cvec exact = solve_dense(A, b);
  const Toeplitz fhf(p.grid, sum_step("cpu-double", "--q-step")(toeplitz_problem(p), Kernel::q));
  const CgResult cg = conjugate_gradient(fhf, lambda, b, 150);
  ASSERT_EQ(cg.residuals.size(), 150u);
  EXPECT_LT(cg.residuals.back(), 1e-10);
  EXPECT_LT(rel_diff(cg.rho, exact), 1e-8);
  EXPECT_LT(cg.residuals[9], cg.residuals[0]);
}

INSTANTIATE_TEST_SUITE_P(Lambda, ConjugateGradient, ::testing::Values(0.0, 0.5));

TEST(Regularizer, IsTheSumOfSquaredDifferences) {
  // <rho, W^H W rho> = ||W rho||^2 = sum of squared forward differences inside the grid.
  const std::array<int, 3> n{3, 4, 2};
  cvec rho(24), out;
  for (size_t i = 0; i < rho.size(); ++i) rho[i] = double(i * i % 7);
  regularizer(n, rho, out);
  double quad = 0, direct = 0;
  for (size_t i = 0; i < rho.size(); ++i) quad += (std::conj(rho[i]) * out[i]).real();
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 3; ++x) {
        const size_t i = (size_t(z) * 4 + y) * 3 + x;
        if (x + 1 < 3) direct += std::norm(rho[i + 1] - rho[i]);
        if (y + 1 < 4) direct += std::norm(rho[i + 3] - rho[i]);
        if (z + 1 < 2) direct += std::norm(rho[i + 12] - rho[i]);
      }
  EXPECT_NEAR(quad, direct, 1e-9 * direct);
}

TEST(Gridding, AdjointMatchesTheDirectSumWithinItsKernelsBound) {
  const Problem p = generate("tiny", 1, 0.0);
  const cvec direct = sum_step("cpu-double", "--fhd-step")(p, Kernel::fhd);
  double previous = 1;
  for (int w : {3, 4, 6, 8}) {
    const double err = rel_diff(gridding_fhd(p, {w, 2.0}), direct);
    const double bound = gridding_error_bound(w, 2.0);
    EXPECT_LE(err, bound) << "W " << w;
    EXPECT_LT(err, previous) << "W " << w;  // wider kernels alias less
    previous = err;
  }
  EXPECT_LT(previous, 1e-6);  // W 8 at sigma 2
  for (double s : {1.25, 1.5}) EXPECT_LE(rel_diff(gridding_fhd(p, {6, s}), direct), gridding_error_bound(6, s)) << s;
}

TEST(Gridding, KernelTransformIsTheKernelsIntegral) {
  // Phi(0) = integral of the kernel over its support (midpoint rule, fine enough here).
  const int W = 5;
  const double beta = kaiser_bessel_beta(W, 2.0);
  double sum = 0;
  const int steps = 200000;
  for (int i = 0; i < steps; ++i) sum += kaiser_bessel(-W / 2.0 + (i + 0.5) * W / steps, W, beta) * W / steps;
  EXPECT_NEAR(kaiser_bessel_transform(0, W, beta), sum, 1e-6 * sum);
  EXPECT_THROW(kaiser_bessel_beta(1, 1.25), core::UsageError);  // W (sigma - 1/2) / sigma < 0.894
}

TEST(Gridding, EsKernelTransformIsItsIntegral) {
  // The quadrature against a fine midpoint rule of the integral of phi(2u/W) cos(2 pi nu u).
  const EsKernel k = es_kernel_for(1e-4, 2.0);
  const int steps = 400000;
  for (double nu : {0.0, 0.1, 0.25, 0.4}) {
    double sum = 0;
    for (int i = 0; i < steps; ++i) {
      const double u = -k.width / 2.0 + (i + 0.5) * k.width / steps;
      sum += es_kernel(u, k) * std::cos(2 * M_PI * nu * u) * k.width / steps;
    }
    EXPECT_NEAR(es_kernel_transform(nu, k), sum, 1e-9 * es_kernel_transform(0, k)) << "nu " << nu;
  }
  EXPECT_EQ(es_kernel(k.width / 2.0 + 1e-9, k), 0.0);
  EXPECT_DOUBLE_EQ(es_kernel(0, k), 1.0);
}

TEST(Gridding, EsWidthFollowsTheTolerance) {
  // One cell more per decade at sigma = 2, beta 2.30 W (Barnett et al. 2019).
  int width = 3;
  for (double t : {1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
    const EsKernel k = es_kernel_for(t, 2.0);
    EXPECT_EQ(k.width, width++) << t;
    EXPECT_NEAR(k.beta, 2.30 * k.width, 0.01 * k.width) << t;
  }
  EXPECT_THROW(es_kernel_for(0.1, 2.0), core::UsageError);
  EXPECT_THROW(es_kernel_for(1e-8, 2.0), core::UsageError);
  EXPECT_THROW(es_kernel_for(std::nan(""), 2.0), core::UsageError);
  EXPECT_THROW(es_kernel_for(1e-4, 1.0), core::UsageError);
}

TEST(Gridding, EsAdjointMeetsItsToleranceAtSigma2) {
  const Problem p = generate("tiny", 1, 0.0);
  const cvec direct = sum_step("cpu-double", "--fhd-step")(p, Kernel::fhd);
  for (double t : {1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
    GriddingParams g;
    g.tolerance = t;
    EXPECT_LE(rel_diff(gridding_fhd(p, g), direct), t) << t;
  }
}

TEST(Gridding, SpiralDensityCoversTheSampledCylinder) {
  for (int R : {1, 2}) {
    const Problem p = generate("small", 1, 0.0, 0, R);
    double sum = 0;
    for (double w : spiral_density(p)) sum += w;
    const double kmax = 16, planes = 32;
    EXPECT_NEAR(sum, M_PI * kmax * kmax * planes, 0.03 * M_PI * kmax * kmax * planes) << "R " << R;
  }
  Problem folder = random_problem(4, 10, 1);
  EXPECT_THROW(spiral_density(folder), core::UsageError);
}

TEST(Generate, UndersamplingKeepsEveryRthArm) {
  const Problem full = generate("tiny", 3, 0.0), half = generate("tiny", 3, 0.0, 0, 2);
  // tiny: 8 planes x 2 arms x 64 points; R 2 keeps arm 0 of each plane.
  ASSERT_EQ(half.samples(), full.samples() / 2);
  EXPECT_EQ(half.name, "tiny-R2");
  EXPECT_EQ(half.params["undersample"], 2);
  for (size_t plane = 0; plane < 8; ++plane)
    for (size_t i = 0; i < 64; ++i) {
      ASSERT_EQ(half.kx[plane * 64 + i], full.kx[plane * 128 + i]);
      ASSERT_EQ(half.dR[plane * 64 + i], full.dR[plane * 128 + i]);
    }
  EXPECT_EQ(generate("tiny", 3, 0.0, 0, 1).digest(), full.digest());
  EXPECT_FALSE(full.params.contains("undersample"));
  EXPECT_THROW(generate("tiny", 3, 0.0, 0, 0), core::UsageError);
  EXPECT_THROW(generate("tiny", 3, 0.0, 0, 3), core::UsageError);
}

TEST(SumStep, UnknownNameListsTheKnownOnes) {
  try {
    sum_step("gpu-magic", "--q-step");
    FAIL() << "no exception";
  } catch (const core::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--q-step gpu-magic"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu-double, cpu-single"), std::string::npos) << what;
  }
}

TEST(TrueImage, IsThePhantomAveragedOverEachVoxel) {
  const Problem p = generate("tiny", 1, 0.0);
  const cvec img = true_image(p, 2);
  double peak = 0;
  for (const auto& v : img) { EXPECT_EQ(v.imag(), 0); peak = std::max(peak, v.real()); }
  EXPECT_GT(peak, 0.5);  // the skull's density is 1 (minus nothing at its rim)
  EXPECT_LE(peak, 2.0 + 1e-12);
}

}  // namespace
}  // namespace mri
