// mri 05_constant_memory: every thread of a warp reads the same sample at the same time, and
// nobody writes it: the lecture puts the samples in __constant__ memory, whose cache
// broadcasts one word to all 32 lanes. Constant memory holds 64 KB, so the samples go in
// chunks, one kernel launch per chunk, each launch adding its chunk into rFhD/iFhD. The last
// chunk is usually partial (numK is rarely a multiple of kChunk): it is launched with its
// true length, so no sample is dropped.
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
  return {"05_constant_memory", "Samples in __constant__ memory, chunked (structure of arrays)", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri
