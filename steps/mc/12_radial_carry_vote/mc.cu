// mc 12_radial_carry_vote: 09_radial_walk with the high word of a tally counter touched only
// in the rounds in which a lane of the warp carried into it (about 0.7 % of deposits, README),
// instead of at every deposit: the same sums, bit for bit, with half the shared-memory atomics.
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
  return {"12_radial_carry_vote", "GPU, 09 with the counters' carry added only when a lane has one", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc
