// mri 09_shared_tiles: 08's loop, with the samples staged through shared memory instead of
// __constant__. Each block walks all samples in tiles of blockDim: every thread copies one
// sample from global memory (coalesced), a barrier, then every thread reads the tile with
// broadcast shared loads (LDS), each sample feeding its --voxels voxels as in 08. Shared
// memory has no 64 KB limit, so there are no chunks, no copies into the constant bank and one
// launch for all samples; the price is two barriers per tile.
// Defaults: the best point of the sweep on `large` (README.md), the same 2,048 voxels per
// block as 08's.
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
  return {"09_shared_tiles", "Samples staged through shared memory in tiles, one launch", true,
          Accuracy::fast,
          {{"threads", 256, 32, 1024, "Threads per block (= samples per tile)"},
           {"unroll", 16, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"},
           {"voxels", 8, 1, 8, "Voxels per thread: 1, 2, 4 or 8"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "voxels")));
}

}  // namespace mri
