// mri 03_gather: the loops interchanged. One thread per voxel gathers the contributions of all
// samples, so each thread owns its output and no atomics are needed. The weights (the
// lecture's cmpMu) no longer belong to any one thread: they become their own kernel (loop
// fission), computed once per sample instead of once per pair.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <cmpMu.cuh>

#include <cmpFhD.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"03_gather", "GPU gather: one thread per voxel, weights as their own kernel", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri
