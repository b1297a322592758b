// mri 06_constant_aos: the same chunks in __constant__ memory, laid out as an array of
// structs. In 05 one sample's five values sat in five arrays 4 KB apart: five cache lines of
// the small constant cache per sample, shared by every warp on the SM. As a struct they are
// 20 contiguous bytes, one or two lines. cmpMu now writes the struct array directly, and each
// chunk is one copy instead of five.
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
  return {"06_constant_aos", "Samples in __constant__ memory as an array of structs", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri
