// ae 06_staged_gradient: 05's tiled convolutions, and the weight gradient staged too. It stages
// a few image rows of d_out and of the input (with halo) and lets each thread sum 4 output x 2
// input channels x 9 taps over them; blocks split the minibatch, and their partial sums are
// added up by a second kernel, which writes every element: no memset, no atomics. The loss and
// the gradient buffers are 05's.
#include <algorithm>
#include <string>

#include "ae/elementwise.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <conv_tiled.cuh>

#include <GradientGeometry.cuh>

#include <StagingLanes.cuh>
#include <stage_planes.cuh>

#include <conv_weight_gradient.cuh>

#include <sum_partials.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"06_staged_gradient", "GPU: 05 with the weight gradient staged in shared memory and split over blocks", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuTiled>(int(threads));
}

}  // namespace ae
