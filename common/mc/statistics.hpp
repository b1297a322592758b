// Statistics of a Monte Carlo tally (steps/mc/README.md, "Validation"): per-photon means and
// covariance of the shell heats from independent batches, Hotelling's T^2 (the chi-square
// of all shells at once, with their correlations) and its F-distribution p-value.
#pragma once
#include <string>
#include <vector>

#include "mc/step.hpp"

namespace mc {

struct ShellStatistics {
  size_t batches = 0;            // non-empty batches
  double photons = 0;            // sum of the batches' photon counts
  int shells = 0;
  std::vector<double> mean;      // per launched photon: fraction of its weight per shell
  std::vector<double> cov;       // per-photon covariance, shells x shells
  std::vector<double> stderr_of_mean;  // sqrt(cov_ii / photons)
  bool finite = true;            // false when a row holds NaN or Inf
};

// Batch means with unequal batch sizes n_b (sums S_b over n_b photons, N = sum n_b):
//   mean = sum_b S_b / N
//   cov  = 1/(B-1) sum_b (S_b - n_b mean)(S_b - n_b mean)^T / n_b      (unbiased)
ShellStatistics summarize_tally(const Tally& tally);

struct HotellingTest {
  bool defined = false;  // false: too few batches or a singular covariance (see why)
  std::string why;
  double t2 = 0;         // N (mean - expected)^T cov^{-1} (mean - expected)
  double f = 0;          // t2 (B - p) / (p (B - 1)) ~ F(p, B - p) for a correct simulation
  double dof1 = 0, dof2 = 0;
  double p_value = 0;    // P(F(p, B-p) >= f)
};
HotellingTest hotelling_test(const ShellStatistics& s, const std::vector<double>& expected);

// Tallies with fewer, larger batches or bins, for tests whose approximations need them.
// pool_batches sums `factor` consecutive rows (batches stay independent: each is a set of
// whole batches); bin_shells sums the shells [first[k], first[k+1]) into bin k (first[0] = 0).
Tally pool_batches(const Tally& t, size_t factor);
Tally bin_shells(const Tally& t, const std::vector<int>& first);

// Heavy tails: a photon that survives a roulette carries weight / survival, so with a high
// threshold and a low survival a few photons carry much of the heat and the batch sums are
// far from normal, which the F and z tails assume. The excess kurtosis of a sum of k batches
// is the batches' divided by k: this returns the smallest power-of-two k that brings the
// batch energy sums' excess kurtosis to at most 1, keeping at least `min_batches` batches.
size_t normalizing_pool_factor(const Tally& t, size_t min_batches);

// A linear combination sum_i a_i mean_i: its value and standard error.
struct Estimate {
  double value = 0, stderr = 0;
};
Estimate linear_estimate(const ShellStatistics& s, const std::vector<double>& a);

// Regularized incomplete beta I_x(a, b) (continued fraction), the F distribution's upper
// tail P(F(d1, d2) >= f), and the two-sided normal tail P(|Z| >= |z|).
double incomplete_beta(double a, double b, double x);
double f_upper_tail(double f, double d1, double d2);
double normal_two_sided(double z);

}  // namespace mc
