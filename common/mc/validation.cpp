#include "mc/validation.hpp"

#include <algorithm>
#include <cmath>

#include "mc/exact.hpp"

namespace mc {

namespace {

// Bins of consecutive shells, chosen from the exact solution and never from the data: each
// bin expects at least kMinExpectedInteractions interactions, and there are at most
// max_bins of them. Far shells that a correct run may leave empty (no scattering, or a
// medium that absorbs fast) join their neighbours instead of making the covariance singular.
std::vector<int> bins_from_exact(const Problem& p, const std::vector<double>& exact, size_t max_bins) {
  // Interactions per launched photon in shell i: the weight absorbed there over the fraction
  // absorbed per interaction.
  std::vector<double> expected(exact.size());
  for (size_t i = 0; i < exact.size(); ++i) expected[i] = double(p.photons) * exact[i] / (1 - p.albedo());
  double need = kMinExpectedInteractions;
  for (;;) {
    std::vector<int> first;
    double in_bin = need;  // start a bin at shell 0
    for (size_t i = 0; i < expected.size(); ++i) {
      if (in_bin >= need) {
        first.push_back(int(i));
        in_bin = 0;
      }
      in_bin += expected[i];
    }
    // The outermost bin may fall short: it joins the one before.
    if (first.size() > 1 && in_bin < need) first.pop_back();
    if (first.size() <= std::max<size_t>(max_bins, 1)) return first;
    need *= 1.25;
  }
}

// z of an estimate against its expectation. Without any spread (every photon deposits all its
// weight at once; a far shell no photon reached) there is no standard error: a value equal to
// the expectation gives 0; nothing at all where the exact solution expects `interactions`
// interactions gives the z of that Poisson event (e^-9.2 ~ 1e-4, the chi-square's limit);
// anything else fails.
double z_of(const Estimate& e, double expected, double interactions) {
  if (e.stderr > 0) return (e.value - expected) / e.stderr;
  if (std::fabs(e.value - expected) <= 1e-9 * std::max(1.0, std::fabs(expected))) return 0.0;
  if (e.value == 0 && interactions < 9.2) return 0.0;
  return INFINITY;
}

}  // namespace

Verdict validate(const Problem& p, const Tally& tally) {
  Verdict v;
  v.exact = exact_shell_absorption(p);
  v.stats = summarize_tally(tally);
  v.counts_ok = v.stats.photons == double(p.photons);
  const int n = p.shells;

  const Tally pooled = pool_batches(tally, normalizing_pool_factor(tally, kMinPooledBatches));
  const ShellStatistics pooled_stats = summarize_tally(pooled);
  v.pooled_batches = pooled_stats.batches;
  v.bins = bins_from_exact(p, v.exact, pooled_stats.batches / kBatchesPerBin);
  const ShellStatistics binned = summarize_tally(bin_shells(pooled, v.bins));
  std::vector<double> binned_exact(v.bins.size(), 0.0);
  for (size_t k = 0; k < v.bins.size(); ++k) {
    const int end = k + 1 < v.bins.size() ? v.bins[k + 1] : n;
    for (int i = v.bins[k]; i < end; ++i) binned_exact[k] += v.exact[i];
  }

  if (v.stats.finite && pooled_stats.batches >= 2) {
    v.energy = linear_estimate(pooled_stats, std::vector<double>(n, 1.0));
    v.energy_z = z_of(v.energy, 1.0, INFINITY);
    std::vector<double> last(n, 0.0);
    last.back() = 1;
    v.beyond = linear_estimate(pooled_stats, last);
    v.beyond_z = z_of(v.beyond, v.exact.back(), double(p.photons) * v.exact.back() / (1 - p.albedo()));
    for (int i = 0; i < n; ++i) {
      const double z = (v.stats.mean[i] - v.exact[i]) / v.stats.stderr_of_mean[i];
      if (std::isfinite(z) && std::fabs(z) > v.max_shell_z) v.max_shell_z = std::fabs(z);
    }
    std::vector<double> heat(n - 1), exact(n - 1);
    for (int i = 0; i + 1 < n; ++i) {
      heat[i] = v.stats.mean[i] / p.shell_volume_cm3(i);
      exact[i] = v.exact[i] / p.shell_volume_cm3(i);
    }
    v.metrics = core::compare(exact, heat);
  }
  // When every photon deposits exactly its launch weight (no roulette ever plays), the bins
  // of a batch add up to its photon count: the last bin is the others' complement, and the
  // covariance of all of them is singular. The test then leaves the last bin out.
  // (Exact up to rounding: the energy's variance is a vanishing fraction of the shells'.)
  bool energy_exact = false;
  if (v.stats.finite && pooled_stats.batches >= 2) {
    double shells_variance = 0;
    for (int i = 0; i < n; ++i) shells_variance += pooled_stats.cov[size_t(i) * n + i];
    energy_exact = v.energy.stderr * v.energy.stderr * pooled_stats.photons <= 1e-9 * shells_variance;
  }
  if (energy_exact && binned.shells > 1) {
    ShellStatistics reduced = binned;
    const int p_all = binned.shells, p_kept = p_all - 1;
    reduced.shells = p_kept;
    reduced.mean.resize(p_kept);
    reduced.stderr_of_mean.resize(p_kept);
    reduced.cov.assign(size_t(p_kept) * p_kept, 0.0);
    for (int i = 0; i < p_kept; ++i)
      for (int j = 0; j < p_kept; ++j) reduced.cov[size_t(i) * p_kept + j] = binned.cov[size_t(i) * p_all + j];
    binned_exact.pop_back();
    v.chi2 = hotelling_test(reduced, binned_exact);
  } else {
    v.chi2 = hotelling_test(binned, binned_exact);
  }

  if (!v.stats.finite) v.failure = "the tally holds NaN or Inf";
  else if (!v.counts_ok)
    v.failure = "the batches account for " + std::to_string(v.stats.photons) + " photons, not " +
                std::to_string(p.photons);
  else if (!v.chi2.defined) v.failure = v.chi2.why;
  else if (v.chi2.p_value < kPValueThreshold) v.failure = "shell heats disagree with the exact solution (chi-square p-value below threshold)";
  else if (!(std::fabs(v.energy_z) <= kZLimit)) v.failure = "energy not conserved: total deposited weight per photon is off by more than 4 standard errors";
  else if (!(std::fabs(v.beyond_z) <= kZLimit)) v.failure = "fraction beyond the last shell is off by more than 4 standard errors";
  v.pass = v.failure.empty();
  return v;
}

}  // namespace mc
