// ae 16_fused_forward: 07's tiled convolutions with the forward pass's element-wise layers
// fused into their epilogues.
//
// In 07 each convolution wrote its sums, and ReLU, pooling and the loss ran as kernels of their
// own, each a pass over an activation in global memory. Here a convolution finishes its sums
// in registers before they leave the SM (Output): conv3 and conv4 add the bias and apply ReLU;
// conv1 and conv2 also take the 2x2 max pool (one shuffle brings the neighbouring column) and
// write the pooled value and a byte saying which pixel won it, not their full-resolution
// activations; conv5 writes the loss's gradient over its output and the block's sum of squared
// errors. The backward pass keeps its element-wise kernels (upsampling's adjoint and ReLU's
// mask from elementwise.cuh; the unpooling, which now reads the winner bytes, here), and the
// training step is the step's own: a GpuStep, no longer LayeredTraining's sequence of layers.
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

#include <unpool_relu.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"16_fused_forward", "GPU: the forward pass's element-wise layers fused into the convolutions", true,
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
