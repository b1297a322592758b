// ae 19_sgd_arranged: 18's fused training step, with SGD writing the weights in the two orders
// the convolutions stage them.
//
// 18 arranged every weight before each forward pass (arrange_weights reads the parameters and
// writes them in the forward and in the mirrored order), just after SGD had written them.
// Here the update itself writes each new weight three times: in the parameters' order (for
// store() and the next update), and in the orders of the next step's forward and input-gradient
// convolutions. arrange_weights runs once, in load().
#include <algorithm>
#include <array>
#include <string>

#include "ae/gpu_training.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <Epilogue.cuh>

#include <conv_tiled.cuh>

#include <GradientGeometry.cuh>

#include <StagingLanes.cuh>
#include <stage_planes.cuh>

#include <conv_weight_gradient.cuh>

#include <sum_partials.cuh>

#include <arrange_weights.cuh>

#include <sgd_arranged.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"19_sgd_arranged", "GPU: element-wise layers fused into the convolutions, SGD writes the arranged weights", true,
          Accuracy::fp32, {{"threads", 256, 32, 1024, "Threads per block of SGD and the weight arrangement (a multiple of 32)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a multiple of 32 from 32 to 1024");
  return std::make_unique<GpuFused>(int(threads));
}

}  // namespace ae
