// ae 21_direct_conv5: 14's training step with conv5 taken off the tensor cores. conv5 has 3
// output channels: as a matrix product it is 3 columns wide, and 14's 128 x 8 tiles staged
// each of its input values nine times (once per tap) through shared memory to multiply it by 8
// weights, 3 of them real. Its input u4, besides, is a4 copied four times by the upsampling.
// Here conv5 is two direct FP32 kernels that read a4 itself (u4(y, x) = a4(y / 2, x / 2)):
// conv5_forward, and conv5_backward, which makes the gradient of a4 (conv5's input gradient,
// the upsampling's adjoint and conv4's ReLU mask at once) and conv5's weight gradient from the
// same 27 sums of d_y per a4 pixel. u4 and its gradient are never written. conv1 to conv4 are
// 14's BF16 products (--precision tf32: 13's TF32 ones); conv5 is float either way.
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

#include <conv5_forward.cuh>

#include <conv5_backward.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"21_direct_conv5", "GPU: 14's BF16 tensor-core GEMMs for conv1-conv4; conv5 direct in FP32, reading a4 (no upsampled copy)",
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
