// mri 08_tuned: with sin/cos on the SFUs, the ceiling is the MUFU pipe (two MUFU per pair);
// everything else in the loop only has to stay out of its way. Four changes:
//  - unroll the sample loop (--unroll). The samples are read with uniform constant loads
//    (ULDC); unrolled, a whole batch of them is issued before the first use, so the constant
//    cache's latency is paid once per batch instead of once per sample. 07 ran at the
//    compiler's default unroll of 4.
//  - fewer instructions per pair: 2 pi folded into the voxel coordinates (one multiply less),
//    and each accumulator updated by two fused multiply-adds instead of the lecture's
//    multiply, multiply-add, add (two instructions less).
//  - several voxels per thread (--voxels): each sample loaded from the constant bank serves
//    all of them, so the loads and the loop's own instructions per pair shrink.
//  - threads per block (--threads) and samples per launch (--chunk) as parameters.
// Defaults: the best point of the sweep on `large` (README.md); on `small` the same shape
// leaves most SMs idle.
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
  return {"08_tuned", "Unrolled, fewer instructions per pair, tuned launch shape", true,
          Accuracy::fast,
          {{"threads", 512, 32, 1024, "Threads per block"},
           {"unroll", 16, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"},
           {"chunk", 3276, 1, kMaxChunk, "Samples per launch (at most 3276: 64 KB of constant memory)"},
           {"voxels", 4, 1, 8, "Voxels per thread: 1, 2, 4 or 8"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "chunk")), int(core::tunable(t, "voxels")));
}

}  // namespace mri
