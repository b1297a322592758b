// mc 08_hybrid: 07_gpu_tuned and 01_cpu_omp at the same time. --gpu-fraction of the photons
// go to 07's kernel (this file's copy of it), launched asynchronously; the host threads
// meanwhile run the rest with 00's photon (common/mc/cpu_photon.hpp), in batches with their
// own Philox streams, tagged apart from the GPU threads' streams. The merge is exact: GPU
// block rows and CPU batch rows are all batches of independent photons, so the tally is
// simply both sets of rows.
#include <algorithm>
#include <omp.h>

#include "mc/cpu_photon.hpp"
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
  return {"08_hybrid", "CPU (OpenMP) and GPU together, exact merge", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"},
           {"gpu-fraction", 0.999, 0.0, 1.0, "Fraction of the photons simulated on the GPU (the rest on the CPU cores)", false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<Hybrid>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"),
                                  core::real_tunable(t, "gpu-fraction"));
}

}  // namespace mc
