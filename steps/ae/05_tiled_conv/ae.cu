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

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Without opting in, a block may have 48 KB of shared memory; every tile below stays under it.
constexpr size_t kSharedLimit = 48 * 1024;

// ---- The tiled 3x3 convolution: the forward pass and the input gradient ----

constexpr int kRowsPerThread = 2;  // output rows per thread: a weight read from shared memory serves both
constexpr int kChannelChunk = 8;   // input channels staged per pass

// Where a block's tile sits and how it is staged. threadIdx.x runs along the image width
// (coalesced loads and stores), threadIdx.y over pairs of rows, threadIdx.z over groups of the
// block's output channels (each thread computes `kOut` of them, see conv_tiled).
struct TileGeometry {
  int tile_w = 0, tile_h = 0;  // output pixels of a block
  int tiles_x = 0, tiles = 0;  // tiles across the width, and per image
  int block_out = 0;           // output channels of a block: blockDim.z x kOut
  int pitch = 0, plane = 0;    // floats per staged row (tile_w + 2 halo, or more) and per staged channel
  size_t shared = 0;           // bytes: the staged input chunk, then its weights
};

TileGeometry tile_geometry(int out_ch, int h, int w, int per_thread) {
  TileGeometry g;
  g.tile_w = std::min(w, 32);
  const int thread_rows = std::max(1, std::min(ceil_div(h, kRowsPerThread), 128 / g.tile_w));
  g.tile_h = thread_rows * kRowsPerThread;
  g.tiles_x = ceil_div(w, g.tile_w);
  g.tiles = g.tiles_x * ceil_div(h, g.tile_h);
  // Up to 256 threads, and at most 4 channel groups: the grid keeps enough blocks for every SM
  // on the 8x8 layers.
  const int groups = std::min({ceil_div(out_ch, per_thread), std::max(1, 256 / (g.tile_w * thread_rows)), 4});
  g.block_out = groups * per_thread;
  // A warp narrower than the tile's 32 banks reads 32 / tile_w staged rows at once, each
  // kRowsPerThread x pitch floats after the last: a pitch that puts them tile_w banks apart
  // makes those reads conflict-free.
  g.pitch = g.tile_w + 2;
  if (g.tile_w < 32)
    for (int p = g.tile_w + 2; p < g.tile_w + 2 + 32; ++p)
      if ((kRowsPerThread * p - g.tile_w) % 32 == 0) {
        g.pitch = p;
        break;
      }
  g.plane = (g.tile_h + 2) * g.pitch;
  g.shared = (size_t(kChannelChunk) * g.plane + size_t(kChannelChunk) * 9 * g.block_out) * sizeof(float);
  if (g.shared > kSharedLimit)
    throw core::RuntimeError("05_tiled_conv: a " + std::to_string(w) + "-pixel-wide tile needs " +
                             std::to_string(g.shared) + " bytes of shared memory, more than 48 KB");
  return g;
}

// out[b][o][y][x] = bias[o] + sum over c, tap of weight[c][tap][o] in[b][c][y+kh-1][x+kw-1]
// (tap = kh * 3 + kw, zero outside the image; bias may be null). `weight` is arranged with the
// output channel fastest (arrange_weights), so that a chunk's weights load coalesced and a
// thread reads four of its channels' weights at once, the same float4 for the whole warp.
// Each thread computes kRowsPerThread pixels in one column for kOut output channels: per
// staged channel it reads 12 inputs and 9 x kOut / 4 float4 weights for 2 x 9 x kOut
// multiply-adds. Grid: x = image x tiles, y = blocks of output channels.
template <int kOut>
__global__ void __launch_bounds__(256)
    conv_tiled(int in_ch, int out_ch, int h, int w, TileGeometry g, const float* __restrict__ in,
               const float* __restrict__ weight, const float* __restrict__ bias, float* __restrict__ out) {
  float* staged_in = shared_floats();                            // [kChannelChunk][tile_h + 2][pitch]
  float* staged_weight = staged_in + kChannelChunk * g.plane;    // [kChannelChunk][9][block_out]
  const int image = blockIdx.x / g.tiles, tile = blockIdx.x % g.tiles;
  const int x0 = tile % g.tiles_x * g.tile_w, y0 = tile / g.tiles_x * g.tile_h, o0 = blockIdx.y * g.block_out;
  const int row = threadIdx.y * kRowsPerThread, channel = threadIdx.z * kOut;  // the thread's first, within the tile
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int staged_w = g.tile_w + 2, staged_pixels = (g.tile_h + 2) * staged_w;
  const size_t image_pixels = size_t(h) * w;
  const float* image_in = in + size_t(image) * in_ch * image_pixels;

  float sum[kRowsPerThread][kOut];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
    for (int j = 0; j < kOut; ++j) sum[r][j] = 0;

  for (int c0 = 0; c0 < in_ch; c0 += kChannelChunk) {
    // The tile and its halo: a thread finds its staged pixels once and copies each from every
    // channel of the chunk (zero outside the image and past the last channel).
    for (int e = rank; e < staged_pixels; e += threads) {
      const int r = e / staged_w, col = e % staged_w;
      const int y = y0 - 1 + r, x = x0 - 1 + col;
      const bool inside = y >= 0 && y < h && x >= 0 && x < w;
      const size_t at = inside ? size_t(y) * w + x : 0;
      float* to = staged_in + r * g.pitch + col;
#pragma unroll
      for (int c = 0; c < kChannelChunk; ++c)
        to[c * g.plane] = inside && c0 + c < in_ch ? image_in[(size_t(c0) + c) * image_pixels + at] : 0.0f;
    }
    for (int k = rank; k < kChannelChunk * 9 * g.block_out; k += threads) {
      const int ct = k / g.block_out, o = k % g.block_out;  // ct = chunk channel x 9 + tap
      staged_weight[k] =
          c0 * 9 + ct < in_ch * 9 && o0 + o < out_ch ? weight[(size_t(c0) * 9 + ct) * out_ch + o0 + o] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kChannelChunk; ++c) {
      if (c0 + c >= in_ch) break;  // the same for the whole block; no barrier inside
      const float* at = staged_in + c * g.plane + row * g.pitch + threadIdx.x;
      float v[kRowsPerThread + 2][3];
#pragma unroll
      for (int r = 0; r < kRowsPerThread + 2; ++r)
#pragma unroll
        for (int col = 0; col < 3; ++col) v[r][col] = at[r * g.pitch + col];
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) {
        const float4* k4 = reinterpret_cast<const float4*>(staged_weight + (c * 9 + tap) * g.block_out + channel);
#pragma unroll
        for (int q = 0; q < kOut / 4; ++q) {
          const float4 k = k4[q];
#pragma unroll
          for (int r = 0; r < kRowsPerThread; ++r) {
            const float a = v[r + tap / 3][tap % 3];
            sum[r][4 * q] += k.x * a;
            sum[r][4 * q + 1] += k.y * a;
            sum[r][4 * q + 2] += k.z * a;
            sum[r][4 * q + 3] += k.w * a;
          }
        }
      }
    }
    __syncthreads();  // the chunk has been read before the next one overwrites it
  }

  const int x = x0 + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + row + r;
    if (y >= h || x >= w) continue;
#pragma unroll
    for (int j = 0; j < kOut; ++j) {
      const int o = o0 + channel + j;
      if (o < out_ch)
        out[(size_t(image) * out_ch + o) * image_pixels + size_t(y) * w + x] = sum[r][j] + (bias ? bias[o] : 0.0f);
    }
  }
}

// ---- The weight gradient and the loss: 04's ----

// gradient[o][i][kh][kw] = sum over the batch's images b and pixels (y, x) of
// d_out[b][o][y][x] in[b][i][y+kh-1][x+kw-1]: the whole minibatch's sum, by one thread.
__global__ void conv_weight_gradient(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ in,
                                     const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int kw = int(idx % 3), kh = int(idx / 3 % 3), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  float sum = 0;
  for (int b = 0; b < batch; ++b) {
    const float* d = d_out + (size_t(b) * out_ch + o) * h * w;
    const float* image = in + (size_t(b) * in_ch + i) * h * w;
    for (int y = max(0, 1 - kh); y < min(h, h + 1 - kh); ++y)
      for (int x = max(0, 1 - kw); x < min(w, w + 1 - kw); ++x) sum += d[y * w + x] * image[(y + kh - 1) * w + x + kw - 1];
  }
  gradient[idx] = sum;
}

__global__ void bias_gradient(int batch, int out_ch, int pixels, const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t o = global_index();
  if (o >= size_t(out_ch)) return;
  float sum = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < pixels; ++j) sum += d_out[(size_t(b) * out_ch + o) * pixels + j];
  gradient[o] = sum;
}

// The weights in the two orders the tiled convolution stages them: forward[i][tap][o], and
// for the input gradient backward[o][8 - tap][i] (the gradient of a 3x3 convolution with
// respect to its input is the convolution of d_out with the mirrored kernel, in and out
// channels swapped). Once per step, before the forward pass: 9 MB of the 1.6 GB a step moves
// at batch 64.
__global__ void arrange_weights(int in_ch, int out_ch, const float* __restrict__ weight, float* __restrict__ forward,
                                float* __restrict__ backward) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_ch + o] = weight[idx];
  backward[(size_t(o) * 9 + 8 - tap) * in_ch + i] = weight[idx];
}

// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// loss, elementwise.cuh's other layers (NCHW), and each activation's gradient in a buffer of its
// own.
class GpuTiledConv final : public ElementwiseLayers {
 public:
  explicit GpuTiledConv(int threads) : ElementwiseLayers(threads, Gradients::separate) {}

 private:
  void allocate_more(int) override {
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
  }

  // A tiled convolution of n images: 16 output channels per thread, or 4 where there are
  // fewer than 16 (conv5's 3 would leave 13 of 16 idle).
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const float* bias,
                float* out) {
    const int per_thread = out_ch >= 16 ? 16 : 4;
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread);
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread));
    if (per_thread == 16)
      launch_grid(conv_tiled<16>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, out);
    else
      launch_grid(conv_tiled<4>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, out);
  }

  void prepare(int) override {
    for (const Conv& c : L_)
      launch(arrange_weights, c.weight_count(), c.in, c.out, state_.params.data() + c.weight, forward_weights_.data() + c.weight,
             backward_weights_.data() + c.weight);
  }

  void conv(int l, int n, const float* in, float* out, bool relu) override {
    const Conv& c = L_[l];
    convolve(n, c.in, c.out, c.height, c.width, in, forward_weights_.data() + c.weight, state_.params.data() + c.bias, out);
    if (relu) relu_in_place(l, n, out);
  }

  void loss_gradient(const float* x, float* y, float* d_y, float* loss) override {
    const size_t outputs = size_t(batch_) * p_->data->image_size();
    CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float)));
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    loss_gradient_atomic<<<unsigned((outputs + threads_ - 1) / threads_), threads_, threads_ * sizeof(float)>>>(
        outputs, scale, mean, y, x, d_y, loss);
    CUDA_CHECK_LAUNCH();
  }

  // The weight and bias gradients of conv l (whole batch), and the gradient of its input.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const int n = batch_;
    launch(conv_weight_gradient, c.weight_count(), n, c.in, c.out, c.height, c.width, in, d_out,
           state_.gradient.data() + c.weight);
    launch(bias_gradient, size_t(c.out), n, c.out, int(c.pixels()), d_out, state_.gradient.data() + c.bias);
    if (d_in)
      convolve(n, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, nullptr, d_in);
  }

  core::DeviceArray<float> forward_weights_, backward_weights_;  // arrange_weights' orders, at each weight's offset
};

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
