// ae 10_weight_gemm: 09's implicit GEMM for the weight gradient too. 08 and 09 summed it from
// staged image rows, a thread 4 output x 2 input channels x 9 taps; it is a product as well
// (the third line below), with the minibatch's pixels as k: the same kernel shape, staging
// both operands pixel by pixel (k-major: a pixel's channels, and its neighbour's for a tap,
// are contiguous in NHWC), 128 x 128 tiles, a thread's 64 sums in registers. The pixel sum is
// split over blocks that write partial sums; a second kernel adds them in a fixed order and
// writes the reference layout, so the result is the same bit for bit from run to run (as in
// 07-09).
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
// Every product uses 128 x 128 tiles, the narrow ones too (conv5's 4 output channels, conv1's
// 36 weight rows): 11 fits the tile to the product.
//
// The element-wise layers follow the layout (NhwcLayers, common/ae/elementwise_nhwc.cuh), and
// ReLU moves into the convolution's store (the NHWC kernels apply ReLU's gradient as pooling
// and upsampling pass it back). Channels are padded to a multiple of 4 (16 bytes): the image's
// 3 become 4 with a zero, conv5's 3 outputs 4 with a zero weight row.
#include <algorithm>
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
  return {"10_weight_gemm", "GPU: every convolution pass an implicit GEMM on NHWC activations (128x128 tiles), FP32 FMA",
          true, Accuracy::fp32,
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<ImplicitGemm>(int(threads));
}

}  // namespace ae
