// mri 02_scatter_atomic: the CPU loop moved to the GPU as it stands. One thread per k-space
// sample (the outer loop); each thread adds its sample's contribution to every voxel, so all
// threads write the same voxels and every update has to be an atomicAdd.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <cmpFhD.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"02_scatter_atomic", "GPU scatter: one thread per sample, atomicAdd into every voxel", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri
