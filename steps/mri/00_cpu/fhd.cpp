// mri 00_cpu: the lecture's sequential loop, one CPU thread, single precision.
// Outer loop over k-space samples, inner loop over voxels: every sample scatters its
// contribution into all voxels.
#include <cmath>
#include <vector>

#include "core/portable.hpp"
#include "mri/step.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <host.hpp>

}  // namespace

StepInfo step_info() {
  return {"00_cpu", "CPU, one thread, the lecture's loop", false, Accuracy::exact, {}};
}

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<CpuLoop>(); }

}  // namespace mri
