// ae 17_fused_backward: 16's fused training step, with the backward pass's element-wise layers
// fused into the input-gradient convolutions' epilogues too.
//
// 16 wrote each input gradient as it was and then ran upsampling's adjoint and ReLU's mask
// (conv5, conv4), or the unpooling through the winner bytes (conv3, conv2), as kernels of their
// own, each a pass over a gradient in global memory. Here the convolution finishes them in
// registers: conv5's and conv4's input gradients are summed over each 2x2 window (one shuffle)
// and masked where a > 0, and written at half resolution; conv3's and conv2's go to their
// window's winner where the pooled value is positive, 0 to the other three. The full-resolution
// d_u4 and d_u3 are never written.
#include <algorithm>
#include <array>
#include <string>

#include "ae/elementwise.cuh"

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

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"17_fused_backward", "GPU: element-wise layers fused into the convolutions, forward and backward", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block of the element-wise kernels (a multiple of 32)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a multiple of 32 from 32 to 1024");
  return std::make_unique<GpuFused>(int(threads));
}

}  // namespace ae
