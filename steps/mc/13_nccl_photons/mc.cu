// mc 13_nccl_photons: 11_gpu_circle_table on several GPUs, one process each. 11's launch is
// planned for the whole problem and cut into equal runs of blocks, one run per rank; each GPU
// simulates its run into its own copy of the batch rows, and one ncclAllReduce sums the copies
// (README). A block's photons, random streams and batch row are those it has in 11's launch,
// and the rows are integers, so the sum is 11's tally bit for bit on any number of GPUs.
#include "core/communicator.cuh"
#include "mc/gpu.cuh"
#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <store_block_tally.cuh>

#include <fly_absorb_scatter.cuh>

#include <transport_round.cuh>

#include <transport.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"13_nccl_photons", "11 on several GPUs: a run of blocks each, the tallies summed by ncclAllReduce", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}},
          true};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc
