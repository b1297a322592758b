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
    throw core::RuntimeError("08_nhwc: a " + std::to_string(w) + "-pixel-wide tile needs " +
                             std::to_string(g.shared) + " bytes of shared memory, more than 48 KB");
  return g;
}

// out[b][y][x][o] = bias[o] + sum over c, tap of weight[c][tap][o] in[b][y+kh-1][x+kw-1][c]
// (tap = kh * 3 + kw, zero outside the image; a bias for o < biased; ReLU if relu). `weight` is arranged with the
// output channel fastest (arrange_weights), so that a chunk's weights load coalesced and a
// thread reads four of its channels' weights at once, the same float4 for the whole warp.
// Each thread computes kRowsPerThread pixels in one column for kOut output channels: per
// staged channel it reads 12 inputs and 9 x kOut / 4 float4 weights for 2 x 9 x kOut
// multiply-adds. Grid: x = image x tiles, y = blocks of output channels.
template <int kOut>
__global__ void __launch_bounds__(256)
    conv_tiled(int in_ch, int out_ch, int h, int w, TileGeometry g, const float* __restrict__ in,
               const float* __restrict__ weight, const float* __restrict__ bias, int biased, bool relu,
               float* __restrict__ out) {
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
      const float* from = image_in + (inside ? size_t(y) * w + x : 0) * in_ch + c0;  // the chunk's channels, side by side
      float* to = staged_in + r * g.pitch + col;
#pragma unroll
      for (int c = 0; c < kChannelChunk; ++c) to[c * g.plane] = inside && c0 + c < in_ch ? from[c] : 0.0f;
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
      if (o >= out_ch) continue;
      const float a = sum[r][j] + (o < biased ? bias[o] : 0.0f);
      out[((size_t(image) * h + y) * w + x) * out_ch + o] = relu ? fmaxf(a, 0.0f) : a;
    }
  }
}

// ---- The weight gradient ----

constexpr int kGradOut = 4, kGradIn = 2;  // channels per thread: its 4 x 2 x 9 sums sit in registers
constexpr int kGradThreads = 128;         // at most, per block
constexpr int kGradThreadsPerSm = 512;    // resident per SM at 118 registers (or fewer, where shared memory binds)

// A block sums, for out_groups x kGradOut output channels and in_groups x kGradIn input
// channels, its split's share of the minibatch's (image, tile of rows) items.
struct GradientGeometry {
  int out_groups = 0, in_groups = 0;  // threads: out_groups x in_groups
  int in_blocks = 0;                  // blocks along the input channels (blockIdx.x = out block x in_blocks + in block)
  int rows = 0, row_tiles = 0;        // image rows staged per item, items per image
  int splits = 0;                     // blocks along the items (blockIdx.y), each writing its own partial sums
  int d_pitch = 0, x_plane = 0;       // floats per staged channel of d_out and of the input: odd, so that
                                      // a warp reading one pixel of many channels hits as many banks
  size_t shared = 0;
};

GradientGeometry gradient_geometry(const Conv& c, int batch, int sms, int shared_per_sm) {
  GradientGeometry g;
  const int out_groups = ceil_div(c.out, kGradOut), in_groups = ceil_div(c.in, kGradIn);
  g.out_groups = std::min(out_groups, 8);
  g.in_groups = std::min(in_groups, kGradThreads / g.out_groups);
  g.out_groups = std::min(out_groups, kGradThreads / g.in_groups);  // conv1 has 2 input groups: 64 output groups
  g.rows = std::min(c.height, std::max(1, 64 / c.width));
  const auto size = [&] {
    g.d_pitch = g.rows * c.width | 1;
    g.x_plane = (g.rows + 2) * (c.width + 2) | 1;
    g.shared = size_t(g.out_groups * kGradOut * g.d_pitch + g.in_groups * kGradIn * g.x_plane) * sizeof(float);
    return g.shared;
  };
  const size_t budget = 40 * 1024;  // several blocks per SM
  while (size() > budget && g.rows > 1) --g.rows;
  while (size() > budget && g.in_groups > 1) g.in_groups = (g.in_groups + 1) / 2;
  while (size() > budget && g.out_groups > 1) g.out_groups = (g.out_groups + 1) / 2;
  if (g.shared > kSharedLimit)
    throw core::RuntimeError("08_nhwc: " + std::to_string(c.width) + "-pixel rows do not fit a weight-gradient tile");
  g.in_blocks = ceil_div(c.in, g.in_groups * kGradIn);
  g.row_tiles = ceil_div(c.height, g.rows);
  const int channel_blocks = ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks;
  const int items = batch * g.row_tiles;
  // As many splits as fill the SMs once: one block more than fits would start a second wave.
  // (The runtime reserves 1 KB of shared memory per block.)
  const int resident = std::max(1, std::min(kGradThreadsPerSm / (g.out_groups * g.in_groups),
                                            int(size_t(shared_per_sm) / (g.shared + 1024))));
  g.splits = std::max(1, std::min(items, sms * resident / channel_blocks));
  return g;
}

// Copies `planes` channels of `count` values each from global to shared memory: value q of
// channel c from src[c * src_plane + at(q)] (zero where at(q) is outside, or c >= valid) to
// dst[c * dst_plane + q]. The block's threads are shared out as `pixels` side by side along a
// channel (a warp's loads coalesced) and `channels` such groups on other channels at once.
// Each thread issues its loads kBatch at a time before storing any: the copy waits on memory
// latency, and only loads in flight together overlap it. (A thread per pixel looping over every
// channel left conv1's 32-pixel rows to one warp, one load after another, while three warps
// waited at the barrier.)
struct StagingLanes {
  int pixels, channels, pixel, channel;
  __device__ StagingLanes(int count, int threads) {
    pixels = min(count, threads);
    channels = threads / pixels;
    pixel = int(threadIdx.x) % pixels;
    channel = int(threadIdx.x) / pixels;
    if (channel >= channels) pixel = count;  // no work
  }
};
constexpr int kBatch = 8;  // loads in flight per thread
template <class At>
__device__ __forceinline__ void stage_planes(const StagingLanes& lane, int count, int planes, int valid, const float* src,
                                             size_t src_plane, float* dst, int dst_plane, At at) {
  for (int q = lane.pixel; q < count; q += lane.pixels) {
    const long offset = at(q);  // negative: outside the image
    for (int c0 = lane.channel; c0 < planes; c0 += kBatch * lane.channels) {
      float v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int c = c0 + u * lane.channels;
        v[u] = offset >= 0 && c < valid ? src[c * src_plane + offset] : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int c = c0 + u * lane.channels;
        if (c < planes) dst[c * dst_plane + q] = v[u];
      }
    }
  }
}

// partial[s][o][i][tap] = sum over split s's items (image b, rows y) and every x of
// d_out[b][y][x][o] in[b][y+kh-1][x+kw-1][i], and partial[s][out_ch x in_ch x 9 + o] = the sum
// of d_out[b][o] over them (the bias gradient, from the threads of the first input block).
// A thread keeps a 3x3 window of each of its input channels in registers and slides it along
// the row: per pixel 2 x 3 new inputs and 4 d_out values feed 72 multiply-adds.
__global__ void __launch_bounds__(kGradThreads)
    conv_weight_gradient(int batch, int in_ch, int out_ch, int in_stored, int out_stored, int h, int w, GradientGeometry g,
                         const float* __restrict__ in, const float* __restrict__ d_out, float* __restrict__ partial) {
  const int block_out = g.out_groups * kGradOut, block_in = g.in_groups * kGradIn;
  float* staged_d = shared_floats();                        // [block_out][d_pitch]: rows x w pixels
  float* staged_in = staged_d + block_out * g.d_pitch;      // [block_in][x_plane]: (rows + 2) x (w + 2) pixels
  const int o0 = blockIdx.x / g.in_blocks * block_out, i0 = blockIdx.x % g.in_blocks * block_in;
  // The thread's channels: o0 + og + out_groups jo and i0 + ig + in_groups ji.
  const int og = threadIdx.x % g.out_groups, ig = threadIdx.x / g.out_groups;
  const int threads = blockDim.x, xw = w + 2;
  const size_t image_pixels = size_t(h) * w;
  const int items = batch * g.row_tiles;
  // The staging of an item, shared by all the block's threads (stage_planes).
  const int d_pixels = g.rows * w, x_pixels = (g.rows + 2) * xw;
  const StagingLanes d_lane(d_pixels, threads), x_lane(x_pixels, threads);
  const int first = int(long(items) * blockIdx.y / g.splits), last = int(long(items) * (blockIdx.y + 1) / g.splits);

  float sum[kGradOut][kGradIn][9], bias_sum[kGradOut];
#pragma unroll
  for (int jo = 0; jo < kGradOut; ++jo) {
    bias_sum[jo] = 0;
#pragma unroll
    for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) sum[jo][ji][tap] = 0;
  }

  for (int item = first; item < last; ++item) {
    const int b = item / g.row_tiles, y0 = item % g.row_tiles * g.rows;
    __syncthreads();  // the previous item's tiles have been read
    // d_out: a pixel's channels side by side, pixels out_stored floats apart; rows past the image are zero.
    const float* d_rows = d_out + (size_t(b) * image_pixels + size_t(y0) * w) * out_stored + o0;
    stage_planes(d_lane, d_pixels, block_out, out_ch - o0, d_rows, 1, staged_d, g.d_pitch,
                 [&](int p) { return y0 + p / w < h ? long(p) * out_stored : -1L; });
    // The input rows with their halo, zero outside the image.
    const float* image_in = in + size_t(b) * image_pixels * in_stored + i0;
    stage_planes(x_lane, x_pixels, block_in, in_ch - i0, image_in, 1, staged_in, g.x_plane, [&](int e) {
      const int y = y0 - 1 + e / xw, x = e % xw - 1;
      return y >= 0 && y < h && x >= 0 && x < w ? (long(y) * w + x) * in_stored : -1L;
    });
    __syncthreads();
    for (int r = 0; r < g.rows; ++r) {
      float window[kGradIn][3][3];  // [channel][kh][kw]: input (y + kh - 1, x + kw - 1) for output pixel (y, x)
#pragma unroll
      for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
        for (int kh = 0; kh < 3; ++kh) {
          const float* staged = staged_in + (ig + g.in_groups * ji) * g.x_plane + (r + kh) * xw;
          window[ji][kh][0] = staged[0];
          window[ji][kh][1] = staged[1];
        }
      for (int x = 0; x < w; ++x) {
#pragma unroll
        for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
          for (int kh = 0; kh < 3; ++kh)
            window[ji][kh][2] = staged_in[(ig + g.in_groups * ji) * g.x_plane + (r + kh) * xw + x + 2];
        float d[kGradOut];
#pragma unroll
        for (int jo = 0; jo < kGradOut; ++jo) {
          d[jo] = staged_d[(og + g.out_groups * jo) * g.d_pitch + r * w + x];
          bias_sum[jo] += d[jo];
        }
#pragma unroll
        for (int jo = 0; jo < kGradOut; ++jo)
#pragma unroll
          for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
            for (int kh = 0; kh < 3; ++kh)
#pragma unroll
              for (int kw = 0; kw < 3; ++kw) sum[jo][ji][kh * 3 + kw] += d[jo] * window[ji][kh][kw];
#pragma unroll
        for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
          for (int kh = 0; kh < 3; ++kh) {
            window[ji][kh][0] = window[ji][kh][1];
            window[ji][kh][1] = window[ji][kh][2];
          }
      }
    }
  }

  float* split = partial + size_t(blockIdx.y) * (size_t(out_ch) * in_ch * 9 + out_ch);
#pragma unroll
  for (int jo = 0; jo < kGradOut; ++jo) {
    const int o = o0 + og + g.out_groups * jo;
    if (o >= out_ch) continue;
#pragma unroll
    for (int ji = 0; ji < kGradIn; ++ji) {
      const int i = i0 + ig + g.in_groups * ji;
      if (i >= in_ch) continue;
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) split[(size_t(o) * in_ch + i) * 9 + tap] = sum[jo][ji][tap];
    }
    if (i0 == 0 && ig == 0) split[size_t(out_ch) * in_ch * 9 + o] = bias_sum[jo];
  }
}

// The weights in the two orders the tiled convolution stages them: forward[i][tap][o], and
// for the input gradient backward[o][8 - tap][i] (the gradient of a 3x3 convolution with
// respect to its input is the convolution of d_out with the mirrored kernel, in and out
// channels swapped). Once per step, before the forward pass: 9 MB of the 1.6 GB a step moves
// at batch 64. in_stored and out_stored are the padded counts; the padding entries are never
// written (zero since allocate_more()).
__global__ void arrange_weights(int in_ch, int out_ch, int in_stored, int out_stored, const float* __restrict__ weight,
                                float* __restrict__ forward, float* __restrict__ backward) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_stored + o] = weight[idx];
  backward[(size_t(o) * 9 + 8 - tap) * in_stored + i] = weight[idx];
}

// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// NhwcLayers' other layers and loss (common/ae/elementwise_nhwc.cuh).
class GpuTiled final : public NhwcLayers {
 public:
  explicit GpuTiled(int threads) : NhwcLayers(threads) {}

 private:
  void allocate_more(int batch) override {
    // The arranged weights with the padded channel counts, at offsets of their own.
    size_t arranged = 0;
    for (int l = 0; l < kLayers; ++l) {
      arranged_at_[l] = arranged;
      arranged += size_t(out_ch_[l]) * 9 * in_ch_[l];
    }
    forward_weights_.resize(arranged);
    backward_weights_.resize(arranged);
    CUDA_CHECK(cudaMemset(forward_weights_.data(), 0, arranged * sizeof(float)));
    CUDA_CHECK(cudaMemset(backward_weights_.data(), 0, arranged * sizeof(float)));
    // Partial sums of the weight gradients, and of the loss before them.
    int device = 0, sms = 0, shared_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    size_t partials = loss_partials(batch);
    for (int l = 0; l < kLayers; ++l) {
      plan_[l] = gradient_geometry(L_[l], batch, sms, shared_per_sm);
      partials = std::max(partials, size_t(plan_[l].splits) * (L_[l].weight_count() + size_t(L_[l].out)));
    }
    partials_.resize(partials);
  }

  // A tiled convolution of n images: 16 output channels per thread, or 4 where there are
  // fewer than 16 (conv5's 3, stored as 4, would leave 12 of 16 idle).
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out) {
    const int per_thread = out_ch >= 16 ? 16 : 4;
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread);
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread));
    if (per_thread == 16)
      launch_grid(conv_tiled<16>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, biased, relu, out);
    else
      launch_grid(conv_tiled<4>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, biased, relu, out);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  void prepare(int) override {
    for (int l = 0; l < kLayers; ++l)
      launch(arrange_weights, L_[l].weight_count(), L_[l].in, L_[l].out, in_ch_[l], out_ch_[l],
             state_.params.data() + L_[l].weight, forward_weights_.data() + arranged_at_[l],
             backward_weights_.data() + arranged_at_[l]);
  }

  void conv(int l, int n, const float* in, float* out, bool relu) override {
    const Conv& c = L_[l];
    convolve(n, in_ch_[l], out_ch_[l], c.height, c.width, in, forward_weights_.data() + arranged_at_[l],
             state_.params.data() + c.bias, c.out, relu, out);
  }

  // The weight and bias gradients of layer l (whole batch), and the gradient of its input.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in, c.out,
                in_ch_[l], out_ch_[l], c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
    if (d_in)
      convolve(batch_, out_ch_[l], in_ch_[l], c.height, c.width, d_out, backward_weights_.data() + arranged_at_[l], nullptr,
               0, false, d_in);
  }

  std::array<GradientGeometry, kLayers> plan_;
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;  // arrange_weights' orders, padded
};

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
