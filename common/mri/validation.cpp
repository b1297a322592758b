#include "validation.hpp"

#include <cmath>

#include "reference.hpp"

namespace mri {

const char* accuracy_name(Accuracy a) { return a == Accuracy::exact ? "exact" : "fast"; }

double rel_l2_threshold(Accuracy a) {
  // Chosen from measured errors (steps/mri/README.md, "Accuracy classes"): the largest error
  // seen in each class (on `large`, where the phases are largest) times about four. A step
  // that drops the last 24 of tiny's 1,024 samples errs by 1.5e-3 (fhd) and 4.3e-2 (q); one
  // that leaves tiny's last voxel at zero by 9.0e-3 (fhd) and 6.0e-4 (q): tests/unit/test_mri.cpp.
  return a == Accuracy::exact ? 3e-4 : 5e-4;
}

Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const float* outR,
                 const float* outI, uint64_t seed) {
  const std::vector<size_t> voxels = reference_voxels(p, seed);
  const auto ref = reference(p, kernel, voxels);
  std::vector<std::complex<double>> test(voxels.size());
  for (size_t i = 0; i < voxels.size(); ++i) test[i] = {outR[voxels[i]], outI[voxels[i]]};
  Verdict v;
  v.reference = "cpu-double";
  v.metrics = core::compare(ref, test);
  v.threshold = rel_l2_threshold(accuracy);
  v.pass = v.metrics.finite && v.metrics.rel_l2 <= v.threshold;
  return v;
}

Verdict validate_parboil(const ParboilOutput& ref, const float* outR, const float* outI) {
  const size_t N = ref.re.size();
  double peak = 0;
  for (size_t i = 0; i < N; ++i) peak = std::max({peak, double(std::abs(ref.re[i])), double(std::abs(ref.im[i]))});
  Verdict v;
  v.reference = "parboil";
  v.threshold = 1e-4 * peak;
  std::vector<std::complex<double>> r(N), t(N);
  for (size_t i = 0; i < N; ++i) {
    r[i] = {ref.re[i], ref.im[i]};
    t[i] = {outR[i], outI[i]};
    for (int c = 0; c < 2; ++c) {
      const double want = c ? ref.im[i] : ref.re[i], got = c ? outI[i] : outR[i];
      const double diff = std::abs(got - want);
      const bool ok = diff <= v.threshold || (want != 0 && diff / std::abs(want) < 2e-3);
      if (!ok || !std::isfinite(got)) ++v.failures;
    }
  }
  v.metrics = core::compare(r, t);
  v.pass = v.failures == 0 && v.metrics.finite;
  return v;
}

}  // namespace mri
