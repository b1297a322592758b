// mri 04_registers: the voxel's coordinates and its two accumulators live in registers for
// the whole loop. In 03 every iteration re-read x[n], y[n], z[n] and read-modify-wrote
// rFhD[n], iFhD[n] in global memory (the compiler cannot keep them in registers: the output
// pointers might alias the inputs); now the loop's only memory traffic is the sample.
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
  return {"04_registers", "Voxel coordinates and accumulators in registers", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri
