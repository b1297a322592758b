// Validation of a step's output, by accuracy class and problem (limits and the measured errors
// they come from: steps/mri/README.md, "Validation").
#pragma once
#include <complex>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "mri/problem.hpp"
#include "mri/step.hpp"

namespace mri {

// A step passes when both measures are at most their limits (and the output is finite):
//   rel_l2   ||out - ref|| / ||ref|| over the compared voxels S
//   kspace   max over samples m of |(1/|S|) sum_{n in S} (out_n - ref_n) e^{-i 2 pi k_m . x_n}|
//            / rms(ref): the error taken back to k-space. A step that loses sample m's
//            contribution (mu_m e^{i 2 pi k_m . x} at every voxel) scores |mu_m| / rms(ref)
//            there, as large as its rel_l2, while float rounding, spread over all samples,
//            scores about rel_l2 / sqrt(|S|): it sees a missing sample that rel_l2 cannot tell
//            from rounding.
struct Limits {
  std::string problem;  // the measured problem the limits belong to, or "unmeasured"
  double rel_l2 = 0;
  double kspace = 0;
};

// The limits for a problem: those measured on the built-in problem of the same shape (voxels x
// samples: tiny, small, large and its 65,536-sample prefix), else conservative ones. The
// tolerance class takes `tolerance` itself (the step's --tolerance) on every problem.
Limits limits_for(const Problem& p, Kernel kernel, Accuracy accuracy, double tolerance = 0);

struct Verdict {
  std::string reference;  // "cpu-double" or "parboil"
  core::ErrorMetrics metrics;
  double threshold = 0;   // on rel_l2 (reference) or on the per-element rule (Parboil)
  double kspace = 0, kspace_limit = 0;  // the k-space residual and its limit (reference only)
  size_t kspace_sample = 0;             // the sample where it peaks
  std::string limits;                   // which measured problem the limits come from
  size_t failures = 0;    // elements outside Parboil's tolerance
  bool pass = false;
};

const char* accuracy_name(Accuracy a);

// The CPU double reference on the voxels validate() compares (reference_voxels with the seed).
struct Expected {
  std::vector<size_t> voxels;
  std::vector<std::complex<double>> values;
};
Expected expected(const Problem& p, Kernel kernel, uint64_t seed);

// Against the CPU double reference on `voxels` (all, or edges plus a seeded sample).
Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const float* outR,
                 const float* outI, uint64_t seed, double tolerance = 0);
// The same against a reference already computed (one reference, many outputs).
Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const Expected& ref,
                 const float* outR, const float* outI, double tolerance = 0);

// The k-space residual of `test` against `ref` on `voxels` (see Limits); `peak` gets the sample.
double kspace_residual(const Problem& p, const std::vector<size_t>& voxels,
                       const std::vector<std::complex<double>>& ref,
                       const std::vector<std::complex<double>>& test, size_t* peak = nullptr);

// Against a Parboil reference output with Parboil's rule: each component passes when
// |diff| <= 1e-4 * max|ref| or |diff| / |ref| < 0.2 %.
Verdict validate_parboil(const ParboilOutput& ref, const float* outR, const float* outI);

}  // namespace mri
