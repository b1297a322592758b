// ae 12_tf32_mma: 11's implicit-GEMM convolutions with their products on the tensor cores. The
// staged tiles, their layout and the blocks' share of the products are 11's; where each thread
// of 11 multiplied its 16 x 8 parts of the warp's tile with FP32 FMAs, one value of k at a
// time, the warp now hands them to mma.sync.m16n8k8, eight values of k per instruction, with
// both operands rounded to TF32 (10-bit mantissas; products summed in float). The weights are
// rounded once per step, where they are arranged. The step is validated against the tf32 class.
//
// A 3x3 convolution of NHWC activations is a matrix product over (pixel) x (tap, channel) read
// straight from the activations, an "implicit GEMM" (no im2col copy):
//
//   forward          out[m][n]  = sum over k of in(m, k) W[n][k]      m = pixel, n = out channel, k = (tap, in channel)
//   input gradient   d_in[m][n] = sum over k of d_out(m, k) W'[n][k]  the same, with the mirrored kernel, in and out swapped
//   weight gradient  dW[m][n]   = sum over k of in(k, m) d_out[k][n]  m = (tap, in channel), n = out channel, k = pixel
//
// where in(m, k) is the input pixel next to pixel m in the direction of k's tap, k's channel (zero
// outside the image).
//
// The element-wise layers follow the layout (NhwcLayers, common/ae/elementwise_nhwc.cuh), and
// ReLU moves into the convolution's store (the NHWC kernels apply ReLU's gradient as pooling
// and upsampling pass it back). Channels are padded to a multiple of 4 (16 bytes): the image's
// 3 become 4 with a zero, conv5's 3 outputs 4 with a zero weight row.
#include <algorithm>
#include <cstdint>
#include <string>

#include "ae/elementwise_nhwc.cuh"
#include "ae/gpu_training.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <Tile.cuh>
#include <conv_gemm.cuh>

#include <weight_gemm.cuh>

#include <gather_weight_gradient.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"12_tf32_mma", "GPU: 11's implicit GEMMs on the tensor cores (TF32 mma.sync)", true,
          Accuracy::tf32,
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"},
           {"tiles", 0, 0, 2, "GEMM tiles: 0 chosen by the size of each product, 1 always 64x64, 2 always 128x128"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<ImplicitGemm>(int(threads), int(core::tunable(tunables, "tiles")));
}

}  // namespace ae
