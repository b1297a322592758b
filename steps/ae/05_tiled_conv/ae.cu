// ae 05_tiled_conv: 04's training step with the convolutions tiled in shared memory. A block
// stages a tile of its image's input channels with their one-pixel halo, eight channels at a
// time, together with the weights of those channels for the block's output channels, and each
// thread computes two pixels of a column for 16 output channels from there: an input value
// leaves global memory once per block, not once per output pixel and tap. The input gradient
// is the same tiled convolution (mirrored kernel, in and out swapped). The weight gradient, the
// loss and the buffers are 04's.
#include <algorithm>
#include <string>

#include "ae/elementwise.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <conv_tiled.cuh>

#include <conv_weight_gradient.cuh>

#include <bias_gradient.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"05_tiled_conv", "GPU: the forward and input-gradient convolutions tiled in shared memory (halo)", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuTiledConv>(int(threads));
}

}  // namespace ae
