// ae 09_conv_gemm: the forward pass and the input gradient as one implicit GEMM, in FP32 FMAs.
// 08 tiled each convolution by its image (a block's tile of pixels, channels staged eight at a
// time, a thread's 2 pixels x 16 channels); here both passes are one shape, the product of an
// M x K and a K x N matrix below, computed by one kernel: a block stages a 32-deep slice of k
// of both operands in shared memory (16-byte copies: NHWC puts 4 channels of a pixel side by
// side), and each warp sums a 64 x 32 part of the block's 128 x 128 tile, a thread 64 of its
// sums in registers, so that every value read from shared memory serves 8 products (08's
// thread: 2 pixels x 16 channels from 12 inputs and 36 float4 weights per staged channel). The
// products' arrangement (16 x 8 parts, a thread's four sums in each) is the one the tensor
// cores' mma.sync will take over in 12. Bias and ReLU are applied where the product is stored.
// The weight gradient is still 08's; 10 makes it a GEMM too.
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
// Every product uses 128 x 128 tiles, the narrow ones too (conv5's 4 output channels): 11 fits
// the tile to the product.
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

#include <GradientGeometry.cuh>

#include <StagingLanes.cuh>
#include <stage_planes.cuh>

#include <conv_weight_gradient.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"09_conv_gemm", "GPU: the forward and input-gradient convolutions an implicit GEMM (NHWC, 128x128 tiles), FP32 FMA",
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
