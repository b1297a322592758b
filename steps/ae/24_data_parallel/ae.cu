// ae 24_data_parallel: 23's training step on every GPU of the run, one process per GPU. Each
// rank holds the whole model and trains on its share of every minibatch (--batch is the
// minibatch over all ranks; rank r of N takes its images batch r / N to batch (r + 1) / N), so
// its loss and gradients are its images' share of the minibatch's mean, and NCCL sums them over
// the ranks. The sums run in buckets on a stream of their own: a layer's gradients go as soon as
// the backward pass has written them (conv5's first), while the backward pass goes on with the
// layers below, and SGD waits for the last bucket. Every rank then makes the same update to the
// same weights; a fingerprint of the weights after every step, compared over the ranks when
// the training is stored, shows it. The kernels are 23's: 22's with conv1's and conv2's max
// pooling in the products' epilogue (winner bytes for the backward pass).
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
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/communicator.cuh"
#include "core/ranks.hpp"
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
  return {"24_data_parallel", "GPU: 23 on every GPU of the run, a share of each minibatch each, the gradients summed by NCCL in buckets during the backward pass",
          true, Accuracy::bf16,  // with --precision tf32: Accuracy::tf32 (ImplicitGemm::accuracy)
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"},
           {"tiles", 0, 0, 2, "GEMM tiles: 0 chosen by the size of each product, 1 always 64x64, 2 always 128x128"},
           {"precision", 1, 0, 1,
            "Tensor-core operands: bf16 (7-bit mantissas; float master weights and sums) or tf32 (10-bit: 13)", true,
            {"tf32", "bf16"}},
           {"buckets", kLayerBuckets, 0, 1,
            "The gradients' sums over the ranks: one after the backward pass, or a bucket per layer as soon as the backward pass has made it",
            true, {"one", "layers"}}},
          {},
          true};  // one process per GPU (core/harness.hpp)
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  const int tiles = int(core::tunable(tunables, "tiles"));
  const int buckets = int(core::tunable(tunables, "buckets"));
  if (core::tunable(tunables, "precision") == 1)
    return std::make_unique<ImplicitGemm<Operands::bf16>>(int(threads), tiles, buckets);
  return std::make_unique<ImplicitGemm<Operands::tf32>>(int(threads), tiles, buckets);
}

}  // namespace ae
