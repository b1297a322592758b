// mc 05_gpu_flat_loop: 04_gpu_rng_direction with the warps kept busy. A photon's length
// varies (73 interactions, then 24 more for each roulette survivor, 1 in 10), and with one
// photon per thread a warp runs as long as its longest photon. Here a thread runs its photons
// in one flat loop, kInFlight at a time: when a photon ends, the thread launches its next one
// in the same interaction, so no lane waits for another until the thread's last photon.
// The interaction itself is 04's.
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
  return {"05_gpu_flat_loop", "GPU, many photons per thread in one flat loop", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuFlatLoop>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc
