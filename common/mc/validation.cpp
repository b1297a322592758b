#include "validation.hpp"

#include <cmath>

#include "exact.hpp"

namespace mc {

Verdict validate(const Problem& p, const Tally& tally) {
  Verdict v;
  v.exact = exact_shell_absorption(p);
  v.stats = summarize_tally(tally);
  v.counts_ok = v.stats.photons == double(p.photons);
  const int n = p.shells;

  if (v.stats.finite && v.stats.batches >= 2) {
    v.energy = linear_estimate(v.stats, std::vector<double>(n, 1.0));
    v.energy_z = (v.energy.value - 1.0) / v.energy.stderr;
    std::vector<double> last(n, 0.0);
    last.back() = 1;
    v.beyond = linear_estimate(v.stats, last);
    v.beyond_z = (v.beyond.value - v.exact.back()) / v.beyond.stderr;
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
  v.chi2 = hotelling_test(v.stats, v.exact);

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
