// Validation of a step's output, by accuracy class (thresholds: steps/mri/README.md).
#pragma once
#include <string>

#include "metrics.hpp"
#include "problem.hpp"
#include "step.hpp"

namespace mri {

struct Verdict {
  std::string reference;  // "cpu-double" or "parboil"
  core::ErrorMetrics metrics;
  double threshold = 0;   // on rel_l2 (reference) or on the per-element rule (Parboil)
  size_t failures = 0;    // elements outside Parboil's tolerance
  bool pass = false;
};

double rel_l2_threshold(Accuracy a);
const char* accuracy_name(Accuracy a);

// Against the CPU double reference on `voxels` (all, or a seeded sample).
Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const float* outR,
                 const float* outI, uint64_t seed);

// Against a Parboil reference output with Parboil's rule: each component passes when
// |diff| <= 1e-4 * max|ref| or |diff| / |ref| < 0.2 %.
Verdict validate_parboil(const ParboilOutput& ref, const float* outR, const float* outI);

}  // namespace mri
