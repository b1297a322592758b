// ae 08_nhwc: 07's kernels on activations stored NHWC (channels last) instead of NCHW: a
// pixel's channels side by side in memory. The algorithm is 07's: the same tiles, staged the
// same way into shared memory in the same order, the same sums; only the addresses the staging
// reads and the stores write change. That is the layout 09's implicit GEMM needs (a 3x3
// convolution read as a matrix product over (pixel) x (tap, channel)), taken on its own here
// so that its cost to 07's kernels is measured apart from the GEMM's gain.
//
// The element-wise layers follow the layout (NhwcLayers, common/ae/elementwise_nhwc.cuh), and
// ReLU moves into the convolution's store (the NHWC kernels apply ReLU's gradient as pooling
// and upsampling pass it back). Channels are padded to a multiple of 4 (16 bytes): the image's
// 3 become 4 with a zero, conv5's 3 outputs 4 with a zero weight row.
#include <algorithm>
#include <string>

#include "ae/elementwise_nhwc.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <conv_tiled.cuh>

#include <GradientGeometry.cuh>

#include <StagingLanes.cuh>
#include <stage_planes.cuh>

#include <conv_weight_gradient.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"08_nhwc", "GPU: 07's tiled convolutions on NHWC activations (channels last, padded to 4)", true,
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
