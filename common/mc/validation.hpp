// Validation of a step's tally against the exact transport solution (statistical class;
// thresholds and their reasons: steps/mc/README.md, "Validation").
#pragma once
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "mc/problem.hpp"
#include "mc/statistics.hpp"
#include "mc/step.hpp"

namespace mc {

// A correct simulation fails a test below with probability about 1e-4 (each).
constexpr double kPValueThreshold = 1e-4;  // Hotelling T^2 over all shells
constexpr double kZLimit = 4.0;            // energy and beyond-the-last-shell z-scores (p = 6e-5)
// The tests' normal and F approximations need enough data per batch and per bin (README):
constexpr size_t kMinPooledBatches = 32;        // heavy tails pool batches, down to this many
constexpr double kMinExpectedInteractions = 100; // per bin of shells, from the exact solution
constexpr size_t kBatchesPerBin = 8;             // at most batches / 8 bins: F(p, B - p) stays sharp

struct Verdict {
  ShellStatistics stats;         // per shell, over the step's own batches (profile, output)
  size_t pooled_batches = 0;     // batches the tests use, after pooling for heavy tails
  std::vector<int> bins;         // first shell of each bin the chi-square test uses
  std::vector<double> exact;     // expected fraction of the weight per shell
  HotellingTest chi2;
  Estimate energy;               // total deposited weight per photon (1 exactly)
  double energy_z = 0;
  Estimate beyond;               // fraction absorbed in the last shell (beyond the others)
  double beyond_z = 0;
  double max_shell_z = 0;        // largest |z| of a single shell (for the eye; not a test)
  core::ErrorMetrics metrics;    // heat densities of the inner shells against the exact ones
  bool counts_ok = false;        // the batches' photon counts add up to the problem's
  bool pass = false;
  std::string failure;           // the first reason it failed
};

Verdict validate(const Problem& p, const Tally& tally);

}  // namespace mc
