// ae 23_pooled_epilogue: 22's training step with conv1's and conv2's max pooling in their
// products' epilogue. The warp that holds a pixel's sum also holds its window's other three
// (the pixel to the right one lane over, the pixels below in another fragment row), so the
// epilogue stores the pooled value and a byte saying which of the four won, and never the
// unpooled activation: a1 (1 MiB an image) is neither written nor read back by pooling, and
// the backward pass sends the gradient through the winner bytes. conv3-conv5 and the rest are
// 22's (14's BF16 products for conv1-conv4, conv5 as direct FP32 kernels reading a4).
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
#include <optional>
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

#include <unpool_winners.cuh>

#include <conv5_forward.cuh>

#include <conv5_backward.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"23_pooled_epilogue", "GPU: 22 with conv1's and conv2's max pooling in the products' epilogue (winner bytes)",
          true, Accuracy::bf16,  // with --precision tf32: Accuracy::tf32 (ImplicitGemm::accuracy)
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"},
           {"tiles", 0, 0, 2, "GEMM tiles: 0 chosen by the size of each product, 1 always 64x64, 2 always 128x128"},
           {"precision", 1, 0, 1,
            "Tensor-core operands: bf16 (7-bit mantissas; float master weights and sums) or tf32 (10-bit: 13)", true,
            {"tf32", "bf16"}}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  const int tiles = int(core::tunable(tunables, "tiles"));
  if (core::tunable(tunables, "precision") == 1)
    return std::make_unique<ImplicitGemm<Operands::bf16>>(int(threads), tiles);
  return std::make_unique<ImplicitGemm<Operands::tf32>>(int(threads), tiles);
}

}  // namespace ae
