// mc 03_gpu_tallies: 02_gpu_naive without the global atomics. Every thread owns a column of
// a shared-memory array heat[shell][thread] and adds its deposits there: no atomics (nobody
// else writes the column) and no bank conflicts (a warp's 32 columns are 32 consecutive
// words). A local array float heat[101] would be the same idea in local memory, which is
// off-chip: 404 bytes x 2048 threads per SM overflow the 256 KB L1. At the end the block
// reduces its columns in three levels (the published CUDA lab report's hierarchy): warp
// shuffles sum each warp's 32 columns, a tree in shared memory sums the warps, and the block
// adds its sums to its batch row in global memory: 102 atomics per block of 128 photons
// instead of ~9,700.
#include <curand_kernel.h>

#include "mc/gpu.cuh"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <store_block_tally.cuh>

#include <transport.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"03_gpu_tallies", "GPU, per-thread tallies in shared memory, block reduction", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTallies>(core::tunable(t, "threads"));
}

}  // namespace mc
