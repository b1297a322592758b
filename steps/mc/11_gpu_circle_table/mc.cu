// mc 11_gpu_circle_table: 10_gpu_fewer_bits with (cos phi, sin phi) read from a table of the
// 1024 angles that phi's 10 bits can name, in shared memory, instead of computed: a shift, a
// mask and one LDS.64 instead of a conversion, an FFMA, the FMUL of the SFU's range reduction
// and two MUFUs (README). The table holds correctly rounded values, so the direction is more
// accurate than 10's.
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
  return {"11_gpu_circle_table", "GPU, 10 with (cos phi, sin phi) from a shared-memory table", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc
