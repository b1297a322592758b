// Unit tests of the MC track: the generator, the exact transport solution (against two
// independent computations), and the statistics that decide pass or fail.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "mc/exact.hpp"
#include "mc/philox.hpp"
#include "core/portable.hpp"
#include "mc/statistics.hpp"
#include "mc/validation.hpp"

namespace mc {
namespace {

// ---------------------------------------------------------------- generator

TEST(Philox, MatchesPublishedKnownAnswers) {
  // Random123's kat_vectors for philox4x32-10.
  struct Kat {
    Counter ctr;
    Key key;
    Counter want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, {{0xffffffffu, 0xffffffffu}},
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, {{0xa4093822u, 0x299f31d0u}},
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& k : kats) {
    const Counter got = philox4x32_10(k.ctr, k.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.c[i], k.want.c[i]) << "word " << i;
  }
}

TEST(Philox, SevenRoundsMatchPublishedKnownAnswers) {
  // Random123's kat_vectors for philox4x32-7 (the in-kernel generator of 06 on).
  struct Kat {
    Counter ctr;
    Key key;
    Counter want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {{0x5f6fb709u, 0x0d893f64u, 0x4f121f81u, 0x4f730a48u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, {{0xffffffffu, 0xffffffffu}},
       {{0x5207ddc2u, 0x45165e59u, 0x4d8ee751u, 0x8c52f662u}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, {{0xa4093822u, 0x299f31d0u}},
       {{0x4dfccabau, 0x190a87f0u, 0xc47362bau, 0xb6b5242au}}},
  };
  for (const Kat& k : kats) {
    const Counter got = philox4x32_7(k.ctr, k.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.c[i], k.want.c[i]) << "word " << i;
  }
}

TEST(Philox, UniformIsNeverZeroAndReachesOne) {
  EXPECT_GT(uniform_0_1(0u), 0.0f);
  EXPECT_EQ(uniform_0_1(0xffffffffu), 1.0f);
  EXPECT_TRUE(std::isfinite(-std::log(uniform_0_1(0u))));
}

TEST(Philox, StreamsOfDifferentBatchesDiffer) {
  PhiloxStream a(7, 0, kTagCpu), b(7, 1, kTagCpu), c(7, 0, kTagGpu);
  int same_ab = 0, same_ac = 0;
  for (int i = 0; i < 64; ++i) {
    const uint32_t x = a.next_bits(), y = b.next_bits(), z = c.next_bits();
    same_ab += x == y;
    same_ac += x == z;
  }
  EXPECT_LT(same_ab, 2);
  EXPECT_LT(same_ac, 2);
}

// ---------------------------------------------------------------- radial inversion

TEST(Inversion, RecoversAnAnalyticPair) {
  // f(r) = e^{-r} / (8 pi)  <->  f^(k) = 1 / (1 + k^2)^2; mass inside R = 1 - e^{-R}(R^2/2 + R + 1).
  const std::vector<double> radii = {0.05, 0.5, 3.0, 11.0};
  const auto m = mass_within([](double k) { return 1 / ((1 + k * k) * (1 + k * k)); }, radii);
  for (size_t i = 0; i < radii.size(); ++i) {
    const double R = radii[i];
    EXPECT_NEAR(m[i], 1 - std::exp(-R) * (R * R / 2 + R + 1), 1e-11) << "R = " << R;
  }
}

TEST(Inversion, CollidedMassTendsToTheTransformAtZero) {
  // Energy conservation of the exact solution: all collisions after the first add up to
  // c/(1-c), so (1-c)(1 + c/(1-c)) = 1 of the weight is absorbed.
  for (double c : {0.5, 10.0 / 11.0, 0.98}) {
    const double far = c > 0.95 ? 900.0 : 300.0;
    const double m = collided_mass_within(c, {far})[0];
    EXPECT_NEAR(m, c / (1 - c), 1e-8 * c / (1 - c)) << "albedo " << c;
  }
}

TEST(Exact, ExpectedInteractionsPerPhoton) {
  // (10/11)^73 is the first weight below 0.001, then every survivor needs 24 more.
  Problem p;
  // 73 + 24 (0.1 + 0.01 + ...) = 75.667; a few deep survivors need 25.
  EXPECT_NEAR(expected_interactions(p), 73 + 24 * (0.1 / 0.9), 2e-4);
}

// ---------------------------------------------------------------- independent check 1:
// the singular-eigenfunction (Case) form. Deforming the inverse transform of the plane-source
// collision density L/(1 - cL) around its pole at k = i kappa0 and the branch cut of
// arctan from i to i infinity gives a sum of decaying exponentials in |x|:
//   C(x) = a0 e^{-kappa0 |x|} + int_0^1 e^{-|x|/nu} / (2 nu D(nu)) dnu,
//   D = (1 - c nu artanh nu)^2 + (c pi nu / 2)^2,  a0 = kappa0 (1 - kappa0^2) / (c (kappa0^2 + c - 1)),
// with c artanh(kappa0) / kappa0 = 1. The uncollided part is the c = 0 term E1(|x|)/2. The
// point-source density is -C'(r) / (2 pi r) (the x-coordinate of an isotropic 3D walk is a
// walk on the line), so a mode e^{-x/nu} of weight g puts 2 g (nu - (R + nu) e^{-R/nu})
// inside radius R. No oscillatory integral, no Fourier quadrature: a different route.

double kappa0_of(double c) {
  double lo = 1e-12, hi = 1 - 1e-15;  // c artanh(k)/k - 1 grows from c - 1 < 0 to +inf
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (c * std::atanh(mid) / mid - 1 < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Tanh-sinh quadrature on [0, 1]; f receives nu and 1 - nu (accurate near both ends).
double tanh_sinh_01(const std::function<double(double, double)>& f) {
  double previous = 0;
  for (double h = 0.5; h > 1e-4; h /= 2) {
    double sum = 0;
    for (double t = -4.5; t <= 4.5 + 1e-12; t += h) {
      const double u = core::kPi / 2 * std::sinh(t);
      const double nu = 1 / (1 + std::exp(-2 * u)), one_minus = 1 / (1 + std::exp(2 * u));
      const double ch = std::cosh(u);
      const double dnu = core::kPi / 2 * std::cosh(t) / (2 * ch * ch);
      if (nu <= 0 || one_minus <= 0) continue;
      sum += f(nu, one_minus) * dnu;
    }
    sum *= h;
    if (h < 0.25 && std::fabs(sum - previous) < 1e-14 * std::max(1.0, std::fabs(sum))) return sum;
    previous = sum;
  }
  return previous;
}

std::vector<double> case_collided_mass_within(double c, const std::vector<double>& radii) {
  const double k0 = kappa0_of(c), nu0 = 1 / k0;
  const double a0 = k0 * (1 - k0 * k0) / (c * (k0 * k0 + c - 1));
  std::vector<double> m;
  for (double R : radii) {
    const double discrete = 2 * a0 * (nu0 - (R + nu0) * std::exp(-R / nu0));
    const double continuum = tanh_sinh_01([c, R](double nu, double one_minus) {
      const double artanh = 0.5 * std::log((1 + nu) / one_minus);
      const double a = 1 - c * nu * artanh, b = c * core::kPi * nu / 2;
      const double mode = (1 / (a * a + b * b) - 1) / nu;  // weight 2 g with g = (1/D - 1)/(2 nu)
      return mode * (nu - (R + nu) * std::exp(-R / nu));
    });
    m.push_back(discrete + continuum);
  }
  return m;
}

TEST(Exact, FourierInversionAgreesWithTheCaseForm) {
  for (double c : {0.5, 10.0 / 11.0, 0.99}) {
    std::vector<double> radii;
    for (int i = 0; i <= 100; ++i) radii.push_back(i * 0.11);
    radii.push_back(40.0);
    const auto fourier = collided_mass_within(c, radii);
    const auto cased = case_collided_mass_within(c, radii);
    for (size_t i = 0; i < radii.size(); ++i)
      EXPECT_NEAR(fourier[i], cased[i], 1e-9 * (1 + cased[i])) << "albedo " << c << ", R = " << radii[i];
    // Shell masses (differences) too, relative to the shell's own mass.
    for (size_t i = 0; i + 2 < radii.size(); ++i) {
      const double f = fourier[i + 1] - fourier[i], e = cased[i + 1] - cased[i];
      EXPECT_NEAR(f, e, 1e-7 * e + 1e-11) << "albedo " << c << ", shell " << i;
    }
  }
}

// Collided mass beyond R straight from the Case modes (a mode's tail 2 g (R + nu) e^{-R/nu}),
// not as the total c/(1 - c) less the mass inside, which is how exact_shell_absorption fills
// its last shell.
double case_collided_mass_beyond(double c, double R) {
  const double k0 = kappa0_of(c), nu0 = 1 / k0;
  const double a0 = k0 * (1 - k0 * k0) / (c * (k0 * k0 + c - 1));
  const double continuum = tanh_sinh_01([c, R](double nu, double one_minus) {
    const double artanh = 0.5 * std::log((1 + nu) / one_minus);
    const double a = 1 - c * nu * artanh, b = c * core::kPi * nu / 2;
    return (1 / (a * a + b * b) - 1) / nu * (R + nu) * std::exp(-R / nu);
  });
  return 2 * a0 * (R + nu0) * std::exp(-R / nu0) + continuum;
}

// What the validation compares against, shell by shell, assembled a second way: the first
// collisions e^{-r1} - e^{-r2}, the Case form's collided mass, (1 - c) of them absorbed; the
// last shell from the Case form's tail beyond R. The entries' sum is 1 by construction (the
// last is the remainder), so it proves nothing; this fails on a wrong shell radius, a wrong
// absorbed fraction, a wrong first-collision term or a wrong remainder.
TEST(Exact, ShellAbsorptionAgreesWithTheCaseFormShellByShell) {
  Problem coarse;  // albedo 1/2, 20 shells of 200 um
  coarse.mu_a = 11;
  coarse.mu_s = 11;
  coarse.shells = 20;
  coarse.microns_per_shell = 200;
  for (const Problem& p : {Problem(), coarse}) {
    const double c = p.albedo(), d = 1 / p.shells_per_mfp();
    std::vector<double> radii;
    for (int i = 0; i < p.shells; ++i) radii.push_back(i * d);
    const std::vector<double> cased = case_collided_mass_within(c, radii);
    const std::vector<double> h = exact_shell_absorption(p);
    ASSERT_EQ(h.size(), size_t(p.shells));
    for (int i = 0; i + 1 < p.shells; ++i) {
      const double want = (1 - c) * (std::exp(-radii[i]) - std::exp(-radii[i + 1]) + cased[i + 1] - cased[i]);
      EXPECT_NEAR(h[i], want, 1e-7 * want) << "albedo " << c << ", shell " << i;
    }
    const double R = radii.back();
    const double beyond = (1 - c) * (std::exp(-R) + case_collided_mass_beyond(c, R));
    EXPECT_NEAR(h.back(), beyond, 1e-7 * beyond) << "albedo " << c << ", beyond R = " << R;
  }
  // tiny_mc's published scale: about 29.35 W/cm^3 at 1 mm and 2.4 % of the energy beyond 5 mm.
  Problem p;
  const std::vector<double> h = exact_shell_absorption(p);
  EXPECT_NEAR(h[20] / p.shell_volume_cm3(20), 29.35, 0.02);
  EXPECT_NEAR(h.back(), 0.0238, 0.0002);
}

// ---------------------------------------------------------------- independent check 2:
// brute force in real space, no transform at all. The x-coordinates of the collisions of a
// point source are the collisions of a plane source; on the line the flight kernel is
// E1(|x|)/2. Cut the half line into cells of width h, assume a flat collision density in
// each cell (the collision-probability method of reactor physics), and solve
//   Q = Q1 + c K Q,   K_ij = W(|i - j|) + W(i + j + 1) (mirror image),
// with exact cell-to-cell probabilities from E3, by conjugate gradients. Error O(h^2).

double expint(int n, double x) {  // E_n(x), x > 0 (series below 1, continued fraction above)
  const double euler = 0.5772156649015329;
  if (x == 0) return 1.0 / (n - 1);
  if (x > 1) {
    double b = x + n, c = 1e300, d = 1 / b, h = d;
    for (int i = 1; i < 10000; ++i) {
      const double an = -double(i) * (n - 1 + i);
      b += 2;
      d = 1 / (an * d + b);
      c = b + an / c;
      const double del = c * d;
      h *= del;
      if (std::fabs(del - 1) < 1e-16) break;
    }
    return h * std::exp(-x);
  }
  double ans = n - 1 ? 1.0 / (n - 1) : -std::log(x) - euler, fact = 1;
  for (int i = 1; i < 10000; ++i) {
    fact *= -x / i;
    double del;
    if (i != n - 1) {
      del = -fact / (i - n + 1);
    } else {
      double psi = -euler;
      for (int ii = 1; ii <= n - 1; ++ii) psi += 1.0 / ii;
      del = fact * (-std::log(x) + psi);
    }
    ans += del;
    if (std::fabs(del) < std::fabs(ans) * 1e-17) break;
  }
  return ans;
}

// Collided collision mass of the point source inside each shell [R_i, R_i+1), R_i = i d.
std::vector<double> brute_force_collided_shells(double c, double d, int shells, int cells_per_shell) {
  const double h = d / cells_per_shell, X = 45.0;
  const int n = int(X / h);
  std::vector<double> W(2 * n + 2);
  W[0] = (h - 0.5 + expint(3, h)) / h;
  for (int m = 1; m < int(W.size()); ++m)
    W[m] = (expint(3, (m - 1) * h) - 2 * expint(3, m * h) + expint(3, (m + 1) * h)) / (2 * h);
  auto apply = [&](const std::vector<double>& q, std::vector<double>& out) {  // out = (I - cK) q
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int j = 0; j < n; ++j) s += (W[std::abs(i - j)] + W[i + j + 1]) * q[j];
      out[i] = q[i] - c * s;
    }
  };
  std::vector<double> q1(n), rhs(n), q(n, 0.0), r(n), p(n), ap(n);
  for (int j = 0; j < n; ++j) q1[j] = 0.5 * (expint(2, j * h) - expint(2, (j + 1) * h));
  for (int i = 0; i < n; ++i) {  // rhs = c K q1: the second collisions
    double s = 0;
    for (int j = 0; j < n; ++j) s += (W[std::abs(i - j)] + W[i + j + 1]) * q1[j];
    rhs[i] = c * s;
  }
  r = rhs;
  p = r;
  double rr = 0;
  for (double v : r) rr += v * v;
  for (int it = 0; it < 500 && rr > 1e-30; ++it) {
    apply(p, ap);
    double pap = 0;
    for (int i = 0; i < n; ++i) pap += p[i] * ap[i];
    const double alpha = rr / pap;
    double rr_new = 0;
    for (int i = 0; i < n; ++i) {
      q[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
      rr_new += r[i] * r[i];
    }
    for (int i = 0; i < n; ++i) p[i] = r[i] + rr_new / rr * p[i];
    rr = rr_new;
  }
  // Point source from plane: mass in [R1, R2] = 2 int C - 2 [R C(R)], C at a cell boundary
  // from the two neighbouring flat densities; q holds half-line masses of the full density.
  auto density_at = [&](int boundary) {
    if (boundary == 0) return q[0] / h;
    return 0.5 * (q[boundary - 1] + q[boundary]) / h;
  };
  std::vector<double> shell(shells);
  for (int s = 0; s < shells; ++s) {
    const int b1 = s * cells_per_shell, b2 = (s + 1) * cells_per_shell;
    double integral = 0;
    for (int j = b1; j < b2; ++j) integral += q[j];
    shell[s] = 2 * integral - 2 * (b2 * h * density_at(b2) - b1 * h * density_at(b1));
  }
  return shell;
}

TEST(Exact, FourierInversionAgreesWithBruteForceTransport) {
  const double c = 10.0 / 11.0, d = 1.0 / 9.090909090909091;
  const int shells = 100;
  std::vector<double> radii;
  for (int i = 0; i <= shells; ++i) radii.push_back(i * d);
  const auto cum = collided_mass_within(c, radii);
  const auto coarse = brute_force_collided_shells(c, d, shells, 4);
  const auto fine = brute_force_collided_shells(c, d, shells, 8);
  double worst_coarse = 0, worst_fine = 0, worst_extrapolated = 0, worst_extrapolated_outer = 0;
  for (int s = 0; s < shells; ++s) {
    const double exact = cum[s + 1] - cum[s];
    // Richardson: the O(h^2) error term cancels in (4 fine - coarse) / 3.
    const double extrapolated = std::fabs((4 * fine[s] - coarse[s]) / 3 / exact - 1);
    worst_coarse = std::max(worst_coarse, std::fabs(coarse[s] / exact - 1));
    worst_fine = std::max(worst_fine, std::fabs(fine[s] / exact - 1));
    worst_extrapolated = std::max(worst_extrapolated, extrapolated);
    if (s >= 5) worst_extrapolated_outer = std::max(worst_extrapolated_outer, extrapolated);
  }
  printf("brute force vs Fourier, worst shell: %.3g (h = d/4), %.3g (h = d/8), %.3g extrapolated, "
         "%.3g extrapolated beyond shell 4\n", worst_coarse, worst_fine, worst_extrapolated, worst_extrapolated_outer);
  // Second-order convergence towards the Fourier answer: halving h cuts the gap ~4x ...
  EXPECT_LT(worst_fine, 0.3 * worst_coarse);
  EXPECT_GT(worst_fine, 0.2 * worst_coarse);
  // ... and the extrapolated brute force lands on it (worst at the origin, where the flat
  // cell densities meet the first collisions' log singularity).
  EXPECT_LT(worst_extrapolated, 1e-4);
  EXPECT_LT(worst_extrapolated_outer, 1e-6);
}

// ---------------------------------------------------------------- statistics

TEST(Statistics, IncompleteBetaAndFTailOnKnownValues) {
  EXPECT_NEAR(incomplete_beta(1, 1, 0.3), 0.3, 1e-14);
  EXPECT_NEAR(incomplete_beta(3, 1, 0.5), 0.125, 1e-14);
  EXPECT_NEAR(incomplete_beta(4.5, 4.5, 0.5), 0.5, 1e-13);
  EXPECT_NEAR(f_upper_tail(3.0, 2, 2), 0.25, 1e-13);  // F(2,2): P(F > f) = 1 / (1 + f)
  EXPECT_NEAR(f_upper_tail(1.0, 7, 7), 0.5, 1e-12);   // the median of F(d, d) is 1
  // F(2, d2) has the closed-form tail (1 + 2 f / d2)^(-d2 / 2).
  EXPECT_NEAR(f_upper_tail(5.0, 2, 1000), std::pow(1 + 10.0 / 1000, -500.0), 1e-15);
  EXPECT_NEAR(f_upper_tail(40.0, 2, 1000) / std::pow(1 + 80.0 / 1000, -500.0), 1.0, 1e-10);
  EXPECT_NEAR(normal_two_sided(1.959963984540054), 0.05, 1e-12);
}

Tally synthetic_tally(int shells, int batches, int per_batch, const std::vector<double>& shift, uint64_t seed) {
  // Each "photon" deposits a correlated Gaussian vector: x_i = 1 + 0.3 g_i + 0.5 g_0 + shift_i.
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  Tally t;
  t.resize(shells, batches);
  for (int b = 0; b < batches; ++b) {
    double* row = t.row(b);
    for (int n = 0; n < per_batch + (b % 3); ++n) {  // unequal batch sizes
      const double common = gauss(rng);
      for (int i = 0; i < shells; ++i) row[i] += 1 + 0.3 * gauss(rng) + 0.5 * common + shift[i];
      row[shells] += 1;
    }
  }
  return t;
}

TEST(Statistics, CovarianceOfBatchesIsPerPhoton) {
  const int shells = 3;
  const Tally t = synthetic_tally(shells, 4000, 20, std::vector<double>(shells, 0.0), 11);
  const ShellStatistics s = summarize_tally(t);
  EXPECT_EQ(s.batches, 4000u);
  for (int i = 0; i < shells; ++i) {
    EXPECT_NEAR(s.mean[i], 1.0, 0.01);
    for (int j = 0; j < shells; ++j)  // per photon: 0.25 common + 0.09 own on the diagonal
      EXPECT_NEAR(s.cov[i * shells + j], 0.25 + (i == j ? 0.09 : 0.0), 0.02) << i << "," << j;
  }
}

TEST(Statistics, HotellingPValuesAreUniformForTheTruthAndTinyForABias) {
  const int shells = 8, runs = 200;
  int below_5_percent = 0;
  for (int r = 0; r < runs; ++r) {
    const Tally t = synthetic_tally(shells, 200, 5, std::vector<double>(shells, 0.0), 100 + r);
    const HotellingTest h = hotelling_test(summarize_tally(t), std::vector<double>(shells, 1.0));
    ASSERT_TRUE(h.defined) << h.why;
    below_5_percent += h.p_value < 0.05;
  }
  // Binomial(200, 0.05): mean 10, sd 3.1.
  EXPECT_GE(below_5_percent, 2);
  EXPECT_LE(below_5_percent, 22);
  // A bias of 0.02 in one shell (per-photon sd 0.58, 1,200 photons: 1.2 standard errors)
  // is invisible; 0.2 is not.
  std::vector<double> shift(shells, 0.0);
  shift[3] = 0.2;
  const HotellingTest biased = hotelling_test(summarize_tally(synthetic_tally(shells, 200, 5, shift, 7)),
                                              std::vector<double>(shells, 1.0));
  EXPECT_LT(biased.p_value, 1e-4);
}

TEST(Statistics, TooFewBatchesIsNotAPass) {
  const Tally t = synthetic_tally(8, 5, 10, std::vector<double>(8, 0.0), 3);
  const HotellingTest h = hotelling_test(summarize_tally(t), std::vector<double>(8, 1.0));
  EXPECT_FALSE(h.defined);
}

// What a correct step looks like to validate(): 1024 batches of 1024 photons with the exact
// means and independent noise of 1 % per shell and batch. Each test below breaks one thing
// and requires the failure to be that thing's.
Tally exact_tally(const Problem& p, uint64_t seed) {
  const size_t batches = 1024;
  const std::vector<double> exact = exact_shell_absorption(p);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  Tally t;
  t.resize(p.shells, batches);
  for (size_t b = 0; b < batches; ++b) {
    const double n = double(p.photons * (b + 1) / batches - p.photons * b / batches);
    for (int i = 0; i < p.shells; ++i) t.row(b)[i] = n * exact[i] * (1 + 0.01 * gauss(rng));
    t.row(b)[p.shells] = n;
  }
  return t;
}

Problem validation_problem() {
  Problem p;
  p.photons = 1 << 20;
  return p;
}

TEST(Validation, ExactMeansPass) {
  const Problem p = validation_problem();
  const Verdict v = validate(p, exact_tally(p, 1));
  EXPECT_TRUE(v.pass) << v.failure;
  EXPECT_EQ(v.bins.size(), size_t(p.shells));  // the default problem keeps every shell a bin
  EXPECT_EQ(v.pooled_batches, 1024u);           // and every batch (light tails)
}

TEST(Validation, BiasedShellsWithTheRightCountsFailOnTheChiSquare) {
  // 1 % of shell 20's heat moved into shell 21 (~30 standard errors): the photons are all
  // there and so is the energy, inside and beyond the last shell; only the profile is wrong.
  const Problem p = validation_problem();
  Tally t = exact_tally(p, 1);
  for (size_t b = 0; b < t.batches(); ++b) {
    const double moved = 0.01 * t.row(b)[20];
    t.row(b)[20] -= moved;
    t.row(b)[21] += moved;
  }
  const Verdict v = validate(p, t);
  EXPECT_TRUE(v.counts_ok);
  EXPECT_TRUE(v.stats.finite);
  EXPECT_LE(std::fabs(v.energy_z), kZLimit);
  EXPECT_LE(std::fabs(v.beyond_z), kZLimit);
  ASSERT_TRUE(v.chi2.defined) << v.chi2.why;
  EXPECT_LT(v.chi2.p_value, kPValueThreshold);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.failure.find("chi-square"), std::string::npos) << v.failure;
}

TEST(Validation, WrongPhotonCountFailsOnTheCounts) {
  // Batch 0 simulated one photon fewer than the problem's share, and says so: every
  // statistic is that of a correct run of N - 1 photons; only the count can see it.
  const Problem p = validation_problem();
  Tally t = exact_tally(p, 1);
  double* row = t.row(0);
  const double n = row[p.shells];
  for (int i = 0; i < p.shells; ++i) row[i] *= (n - 1) / n;
  row[p.shells] = n - 1;
  const Verdict v = validate(p, t);
  EXPECT_FALSE(v.counts_ok);
  ASSERT_TRUE(v.chi2.defined) << v.chi2.why;
  EXPECT_GE(v.chi2.p_value, kPValueThreshold);
  EXPECT_LE(std::fabs(v.energy_z), kZLimit);
  EXPECT_LE(std::fabs(v.beyond_z), kZLimit);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.failure.find("photons, not " + std::to_string(p.photons)), std::string::npos) << v.failure;
}

TEST(Validation, NaNFailsAsNaN) {
  const Problem p = validation_problem();
  Tally t = exact_tally(p, 1);
  t.row(3)[5] = NAN;
  const Verdict v = validate(p, t);
  EXPECT_TRUE(v.counts_ok);
  EXPECT_FALSE(v.stats.finite);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.failure, "the tally holds NaN or Inf");
}

}  // namespace
}  // namespace mc
