// ae 19_sgd_arranged: 18's fused training step, with SGD writing the weights in the two orders
// the convolutions stage them.
//
// 18 arranged every weight before each forward pass (arrange_weights reads the parameters and
// writes them in the forward and in the mirrored order), just after SGD had written them.
// Here the update itself writes each new weight three times: in the parameters' order (for
// store() and the next update), and in the orders of the next step's forward and input-gradient
// convolutions. arrange_weights runs once, in load().
#include <algorithm>
#include <array>
#include <string>

#include "ae/gpu_training.cuh"

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
    throw core::RuntimeError("19_sgd_arranged: a " + std::to_string(w) + "-pixel-wide tile needs " +
                             std::to_string(g.shared) + " bytes of shared memory, more than 48 KB");
  return g;
}

// ---- What a convolution reads and what it writes: the fusions ----

// Where a convolution's input comes from. conv4 and conv5 convolve the x2 nearest-neighbour
// upsampling of the layer before's activations: instead of writing the upsampled plane (4x the
// bytes) and reading it back, they read each pixel from the half-resolution plane it copies.
enum class Input { plain, upsampled };

template <Input kIn>
__host__ __device__ __forceinline__ size_t input_pixels(int h, int w) {
  return kIn == Input::upsampled ? size_t(h / 2) * (w / 2) : size_t(h) * w;
}
template <Input kIn>
__device__ __forceinline__ size_t input_at(int y, int x, int w) {
  return kIn == Input::upsampled ? size_t(y >> 1) * (w >> 1) + (x >> 1) : size_t(y) * w + x;
}

// What a tiled convolution does with its sums before they leave the SM: the element-wise
// layer that follows it, applied in registers, so that no pass over global memory is left
// for ReLU, pooling, upsampling's adjoint, unpooling or the loss.
enum class Output {
  bias_relu,        // a = max(conv + bias, 0)                                    conv3, conv4
  bias_relu_pool,   // p = 2x2 max of max(conv + bias, 0), and which pixel won    conv1, conv2
  bias,             // y = conv + bias, the reconstruction                        conv5 (reconstruct())
  bias_loss,        // d_y = scale (conv + bias - x), the block's squared error   conv5 (training)
  up_adjoint_relu,  // d_a = 2x2 sum of the input gradient, where a > 0           backward of conv5, conv4
  unpool_relu,      // d_a = the input gradient at the window's winner if p > 0   backward of conv3, conv2
};

struct Epilogue {
  const float* bias = nullptr;      // bias_*
  float* out = nullptr;             // what the mode writes
  unsigned char* winner = nullptr;  // bias_relu_pool writes it, unpool_relu reads it: dy * 2 + dx in the window
  const float* gate = nullptr;      // up_adjoint_relu: a, at half resolution; unpool_relu: p, the pooled output
  const float* target = nullptr;    // bias_loss: the minibatch's images
  float* partial = nullptr;         // bias_loss: mean x the block's sum of squared errors, one per block
  float scale = 0, mean = 0;        // bias_loss
};

// The lanes of this thread's warp that exist (a block of the 4x4 layers of the tiny model ends
// in a partial warp): the mask of the pairwise shuffles below. A block's thread count is a
// multiple of the even tile width, so a lane's neighbour (lane ^ 1) always exists.
__device__ __forceinline__ unsigned warp_lanes(int rank, int threads) {
  const int present = min(32, threads - (rank & ~31));
  return present == 32 ? 0xffffffffu : (1u << present) - 1;
}

// The tiled 3x3 convolution of 07 (the same staging and inner loop), with the input read
// through `kIn` and the sums finished by `kMode` instead of written as they are.
// out[b][o][y][x] = bias[o] + sum over c, tap of weight[c][tap][o] in[b][c][y+kh-1][x+kw-1]
// (tap = kh * 3 + kw, zero outside the image). `weight` is arranged with the output channel
// fastest (arrange_weights), so that a chunk's weights load coalesced and a thread reads four
// of its channels' weights at once, the same float4 for the whole warp. Each thread computes
// kRowsPerThread pixels in one column for kOut output channels. Grid: x = image x tiles, y =
// blocks of output channels.
//
// The 2x2 windows of pooling and of upsampling's adjoint are a thread's two rows (row is even)
// and its neighbour's column: threadIdx.x runs along the width and tile_w is even, so the
// neighbour is the next lane, and one shuffle brings its two values.
template <int kOut, Input kIn, Output kMode>
__global__ void __launch_bounds__(256)
    conv_tiled(int in_ch, int out_ch, int h, int w, TileGeometry g, const float* __restrict__ in,
               const float* __restrict__ weight, Epilogue e) {
  static_assert(kRowsPerThread == 2, "the 2x2 windows of the epilogues are a thread's two rows");
  float* staged_in = shared_floats();                            // [kChannelChunk][tile_h + 2][pitch]
  float* staged_weight = staged_in + kChannelChunk * g.plane;    // [kChannelChunk][9][block_out]
  const int image = blockIdx.x / g.tiles, tile = blockIdx.x % g.tiles;
  const int x0 = tile % g.tiles_x * g.tile_w, y0 = tile / g.tiles_x * g.tile_h, o0 = blockIdx.y * g.block_out;
  const int row = threadIdx.y * kRowsPerThread, channel = threadIdx.z * kOut;  // the thread's first, within the tile
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int staged_w = g.tile_w + 2, staged_pixels = (g.tile_h + 2) * staged_w;
  const size_t image_pixels = size_t(h) * w, in_pixels = input_pixels<kIn>(h, w);
  const float* image_in = in + size_t(image) * in_ch * in_pixels;

  float sum[kRowsPerThread][kOut];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
    for (int j = 0; j < kOut; ++j) sum[r][j] = 0;

  for (int c0 = 0; c0 < in_ch; c0 += kChannelChunk) {
    for (int p = rank; p < staged_pixels; p += threads) {
      const int r = p / staged_w, col = p % staged_w;
      const int y = y0 - 1 + r, x = x0 - 1 + col;
      const bool inside = y >= 0 && y < h && x >= 0 && x < w;
      const size_t at = inside ? input_at<kIn>(y, x, w) : 0;
      float* to = staged_in + r * g.pitch + col;
#pragma unroll
      for (int c = 0; c < kChannelChunk; ++c)
        to[c * g.plane] = inside && c0 + c < in_ch ? image_in[(size_t(c0) + c) * in_pixels + at] : 0.0f;
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
    __syncthreads();  // the chunk has been read before the next one overwrites it (or the epilogue reuses it)
  }

  const int x = x0 + threadIdx.x, y = y0 + row;
  const bool column = x < w;
  const float* bias = e.bias;
  if constexpr (kMode == Output::bias_relu || kMode == Output::bias) {
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (y + r >= h || !column) continue;
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        if (o >= out_ch) continue;
        const float a = sum[r][j] + bias[o];
        e.out[(size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x] =
            kMode == Output::bias_relu ? fmaxf(a, 0.0f) : a;
      }
    }
  } else if constexpr (kMode == Output::bias_loss) {
    // d_y over the reconstruction's place, and the squared errors summed over the block in a
    // fixed order (the same loss every run): 32 lanes each add a strided share, one adds those.
    float squares = 0;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (y + r >= h || !column) continue;
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        if (o >= out_ch) continue;
        const size_t at = (size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x;
        const float error = sum[r][j] + bias[o] - e.target[at];
        e.out[at] = e.scale * error;
        squares += error * error;
      }
    }
    float* shared = shared_floats();  // threads + 32 floats; the staged chunk is no longer read
    shared[rank] = squares;
    __syncthreads();
    if (rank < 32) {
      float share = 0;
      for (int i = rank; i < threads; i += 32) share += shared[i];
      shared[threads + rank] = share;
    }
    __syncthreads();
    if (rank == 0) {
      float block = 0;
      for (int i = 0; i < min(32, threads); ++i) block += shared[threads + i];
      e.partial[blockIdx.y * gridDim.x + blockIdx.x] = e.mean * block;
    }
  } else {
    // The 2x2 modes: h and w are even, so a window is wholly inside the image or wholly out.
    const unsigned lanes = warp_lanes(rank, threads);
    const bool inside = column && y < h;
    if constexpr (kMode == Output::bias_relu_pool || kMode == Output::up_adjoint_relu) {
      const int ph = h / 2, pw = w / 2;
      const bool left = (threadIdx.x & 1) == 0;  // the window's left column writes its result
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        const size_t at = (size_t(image) * out_ch + o) * ph * pw + size_t(y / 2) * pw + x / 2;
        if constexpr (kMode == Output::bias_relu_pool) {
          const float b = o < out_ch ? bias[o] : 0.0f;
          const float top = fmaxf(sum[0][j] + b, 0.0f), bottom = fmaxf(sum[1][j] + b, 0.0f);
          const float top_right = __shfl_xor_sync(lanes, top, 1), bottom_right = __shfl_xor_sync(lanes, bottom, 1);
          if (left && inside && o < out_ch) {
            // The first maximum in row-major order, the pixel the reference's pooling takes.
            float best = top;
            unsigned char won = 0;
            if (top_right > best) best = top_right, won = 1;
            if (bottom > best) best = bottom, won = 2;
            if (bottom_right > best) best = bottom_right, won = 3;
            e.out[at] = best;
            e.winner[at] = won;
          }
        } else {
          // Upsampling copied a to four pixels, so its adjoint adds their four gradients; ReLU's
          // gradient passes where a (the ReLU's output) is positive.
          float window = sum[0][j] + sum[1][j];
          window += __shfl_xor_sync(lanes, window, 1);
          if (left && inside && o < out_ch) e.out[at] = e.gate[at] > 0 ? window : 0.0f;
        }
      }
    } else {
      static_assert(kMode == Output::unpool_relu, "an output mode without an epilogue");
      // The gradient of the pooled value goes to the window's winner, and through the ReLU
      // where the pooled value (the winner's) is positive; the window's other three get 0.
      // The image of d_a is (2h, 2w): a thread writes its two rows as four float2 rows.
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        if (!inside || y + r >= h) continue;
#pragma unroll
        for (int j = 0; j < kOut; ++j) {
          const int o = o0 + channel + j;
          if (o >= out_ch) continue;
          const size_t at = (size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x;
          const float d = e.gate[at] > 0 ? sum[r][j] : 0.0f;
          const int won = e.winner[at];
          float* to = e.out + (size_t(image) * out_ch + o) * 4 * image_pixels + size_t(2 * (y + r)) * (2 * w) + 2 * x;
          *reinterpret_cast<float2*>(to) = make_float2(won == 0 ? d : 0.0f, won == 1 ? d : 0.0f);
          *reinterpret_cast<float2*>(to + 2 * w) = make_float2(won == 2 ? d : 0.0f, won == 3 ? d : 0.0f);
        }
      }
    }
  }
}

// ---- The weight gradient ----

constexpr int kGradOut = 4, kGradIn = 2;  // channels per thread: its 4 x 2 x 9 sums sit in registers
constexpr int kGradThreads = 128;         // at most, per block
constexpr int kGradThreadsPerSm = 512;    // resident per SM at 118 registers (or fewer, where shared memory binds)
constexpr int kSplitLanes = 8;            // threads that add one element's partial sums

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
    throw core::RuntimeError("19_sgd_arranged: " + std::to_string(c.width) + "-pixel rows do not fit a weight-gradient tile");
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
// d_out[b][o][y][x] in[b][i][y+kh-1][x+kw-1] (in read through input_at: conv4 and conv5 take
// the layer before's activations at half resolution and upsample them as they stage them), and partial[s][out_ch x in_ch x 9 + o] = the sum
// of d_out[b][o] over them (the bias gradient, from the threads of the first input block).
// A thread keeps a 3x3 window of each of its input channels in registers and slides it along
// the row: per pixel 2 x 3 new inputs and 4 d_out values feed 72 multiply-adds.
template <Input kIn>
__global__ void __launch_bounds__(kGradThreads)
    conv_weight_gradient(int batch, int in_ch, int out_ch, int h, int w, GradientGeometry g, const float* __restrict__ in,
                         const float* __restrict__ d_out, float* __restrict__ partial) {
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
    // d_out: the rows are contiguous in each channel; rows past the image are zero.
    const float* d_rows = d_out + (size_t(b) * out_ch + o0) * image_pixels + size_t(y0) * w;
    stage_planes(d_lane, d_pixels, block_out, out_ch - o0, d_rows, image_pixels, staged_d, g.d_pitch,
                 [&](int p) { return y0 + p / w < h ? long(p) : -1L; });
    // The input rows with their halo, zero outside the image.
    const size_t in_pixels = input_pixels<kIn>(h, w);
    const float* image_in = in + (size_t(b) * in_ch + i0) * in_pixels;
    stage_planes(x_lane, x_pixels, block_in, in_ch - i0, image_in, in_pixels, staged_in, g.x_plane, [&](int e) {
      const int y = y0 - 1 + e / xw, x = e % xw - 1;
      return y >= 0 && y < h && x >= 0 && x < w ? long(input_at<kIn>(y, x, w)) : -1L;
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

// total[j] = sum over s of partial[s][j], j < count: blockDim (32, kSplitLanes); threadIdx.x
// runs along j (coalesced), threadIdx.y over the splits, whose sums meet in shared memory.
// Every element is written: the gradient needs no zeroing before the step.
__global__ void sum_partials(size_t count, int splits, const float* __restrict__ partial, float* __restrict__ total) {
  float* lanes = shared_floats();  // [kSplitLanes][32]
  const size_t j = size_t(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0;
  if (j < count)
    for (int s = threadIdx.y; s < splits; s += kSplitLanes) sum += partial[size_t(s) * count + j];
  lanes[threadIdx.y * 32 + threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < count) {
    float t = 0;
    for (int l = 0; l < kSplitLanes; ++l) t += lanes[l * 32 + threadIdx.x];
    total[j] = t;
  }
}

// The weights in the two orders the tiled convolution stages them: forward[i][tap][o], and
// for the input gradient backward[o][8 - tap][i] (the gradient of a 3x3 convolution with
// respect to its input is the convolution of d_out with the mirrored kernel, in and out
// channels swapped). Here only in load(): from then on sgd_arranged writes both orders.
__global__ void arrange_weights(int in_ch, int out_ch, const float* __restrict__ weight, float* __restrict__ forward,
                                float* __restrict__ backward) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_ch + o] = weight[idx];
  backward[(size_t(o) * 9 + 8 - tap) * in_ch + i] = weight[idx];
}

// ---- SGD ----

// SGD with momentum as PyTorch defines it (v = momentum v + g; w -= lr v) for one layer's
// weights and the bias that follows them, and each updated weight written in the two orders
// of the next step's convolutions: 07 read every weight again for that (arrange_weights).
__global__ void sgd_arranged(int in_ch, int out_ch, float lr, float momentum, const float* __restrict__ gradient,
                             float* __restrict__ velocity, float* __restrict__ params, float* __restrict__ forward,
                             float* __restrict__ backward) {
  const size_t idx = global_index(), weights = size_t(out_ch) * in_ch * 9;
  if (idx >= weights + out_ch) return;
  const float v = momentum * velocity[idx] + gradient[idx];
  const float p = params[idx] - lr * v;
  velocity[idx] = v;
  params[idx] = p;
  if (idx >= weights) return;  // a bias
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_ch + o] = p;
  backward[(size_t(o) * 9 + 8 - tap) * in_ch + i] = p;
}

// A GpuStep (common/ae/gpu_training.cuh: the images, the training state, store() and
// reconstruct()) whose training step is its own: the fused kernels above.
class GpuFused final : public GpuStep {
 public:
  explicit GpuFused(int threads) : GpuStep(threads, Layout::nchw) {}

  void allocate(int batch) override {
    for (const Conv& c : L_)
      if (c.bias != c.weight + c.weight_count())
        throw core::RuntimeError("19_sgd_arranged: a layer's bias must follow its weights (sgd_arranged updates both)");
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
    for (const Conv& c : L_)
      launch(arrange_weights, c.weight_count(), c.in, c.out, state_.params.data() + c.weight, forward_weights_.data() + c.weight,
             backward_weights_.data() + c.weight);
    // What the backward pass needs of the forward pass, for a minibatch or for the images
    // reconstruct() is asked for: the pooled outputs and their windows' winners (not conv1's
    // and conv2's full-resolution activations, which 07 kept), a3 and a4 (not their upsamplings).
    const size_t n = size_t(capacity_);
    auto size = [n](const Conv& c, int ch) { return n * ch * c.pixels(); };
    p1_.resize(size(L_[1], L_[1].in)), winner1_.resize(p1_.size());
    p2_.resize(size(L_[2], L_[2].in)), winner2_.resize(p2_.size());
    a3_.resize(size(L_[2], L_[2].out));
    a4_.resize(size(L_[3], L_[3].out));
    // The reconstruction's gradient and every activation gradient: two buffers of the largest
    // size (backward() says which holds what when).
    size_t largest = 0;
    for (const Conv& c : L_) largest = std::max({largest, size(c, c.in), size(c, c.out)});
    for (auto& g : gradients_) g.resize(largest);
    // Partial sums of the weight gradients, and of the loss (one per block of conv5) before them.
    int device = 0, sms = 0, shared_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    const Conv& last = L_[kLayers - 1];
    const TileGeometry loss_tiles = tile_geometry(last.out, last.height, last.width, per_thread(last.out));
    loss_blocks_ = batch * loss_tiles.tiles * ceil_div(last.out, loss_tiles.block_out);
    size_t partials = size_t(loss_blocks_);
    for (int l = 0; l < kLayers; ++l) {
      plan_[l] = gradient_geometry(L_[l], batch, sms, shared_per_sm);
      partials = std::max(partials, size_t(plan_[l].splits) * (L_[l].weight_count() + size_t(L_[l].out)));
    }
    partials_.resize(partials);
  }

  void train(long long steps) override {
    state_.reserve(t_ + steps);
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = minibatch(t_);
      forward(x, batch_, true);
      sum_splits(1, loss_blocks_, state_.losses() + t_);  // conv5's block sums, in a fixed order
      backward(x);
      for (const Conv& c : L_)
        launch(sgd_arranged, c.weight_count() + size_t(c.out), c.in, c.out, float(p_->lr), float(p_->momentum),
               state_.gradient.data() + c.weight, state_.velocity.data() + c.weight, state_.params.data() + c.weight,
               forward_weights_.data() + c.weight, backward_weights_.data() + c.weight);
    }
  }

 private:
  // reconstruct()'s forward pass: the reconstruction y into gradients_[0].
  void forward(const float* x, int n) override { forward(x, n, false); }
  float* reconstruction() override { return gradients_[0].data(); }

  // 16 output channels per thread, or 4 where there are fewer than 16 (conv5's 3 would leave
  // 13 of 16 idle).
  static int per_thread(int out_ch) { return out_ch >= 16 ? 16 : 4; }

  // A tiled convolution of n images on an h x w grid, its input read as kIn says and its sums
  // finished as kMode says.
  template <Input kIn, Output kMode>
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const Epilogue& e) {
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread(out_ch));
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread(out_ch)));
    if (per_thread(out_ch) == 16)
      launch_grid(conv_tiled<16, kIn, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
    else
      launch_grid(conv_tiled<4, kIn, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
  }

  // Layer l forward on n images.
  template <Input kIn, Output kMode>
  void conv(int l, int n, const float* in, Epilogue e) {
    const Conv& c = L_[l];
    e.bias = state_.params.data() + c.bias;
    convolve<kIn, kMode>(n, c.in, c.out, c.height, c.width, in, forward_weights_.data() + c.weight, e);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  // Training (x the minibatch): the reconstruction's gradient d_y and the loss's block sums;
  // otherwise the reconstruction y. Either goes to gradients_[0].
  void forward(const float* x, int n, bool training) {
    Epilogue e;
    e.out = p1_.data(), e.winner = winner1_.data();
    conv<Input::plain, Output::bias_relu_pool>(0, n, x, e);
    e.out = p2_.data(), e.winner = winner2_.data();
    conv<Input::plain, Output::bias_relu_pool>(1, n, p1_.data(), e);
    e = Epilogue{};
    e.out = a3_.data();
    conv<Input::plain, Output::bias_relu>(2, n, p2_.data(), e);
    e.out = a4_.data();
    conv<Input::upsampled, Output::bias_relu>(3, n, a3_.data(), e);
    e.out = gradients_[0].data();
    if (training) {
      const size_t outputs = size_t(n) * p_->data->image_size();
      e.target = x, e.partial = partials_.data(), e.scale = 2.0f / float(outputs), e.mean = 1.0f / float(outputs);
      conv<Input::upsampled, Output::bias_loss>(4, n, a4_.data(), e);
    } else {
      conv<Input::upsampled, Output::bias>(4, n, a4_.data(), e);
    }
  }

  // The weight and bias gradients of layer l over the minibatch (its input read as kIn says).
  template <Input kIn>
  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient<kIn>, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in,
                c.out, c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
  }

  // The gradient of layer l's input, finished by kMode into the gradient of the activation
  // before the upsampling or pooling that made that input.
  template <Output kMode>
  void input_gradient(int l, const float* d_out, Epilogue e) {
    const Conv& c = L_[l];
    convolve<Input::plain, kMode>(batch_, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, e);
  }

  void backward(const float* x) {
    // Each gradient is read only to make the next one (and its layer's weight gradient), so
    // two buffers serve them all, in turn; the first starts as d_y.
    float* const d_y = gradients_[0].data();
    float* const d_a4 = gradients_[1].data();
    float* const d_a3 = gradients_[0].data();
    float* const d_a2 = gradients_[1].data();
    float* const d_a1 = gradients_[0].data();
    Epilogue e;
    weight_gradient<Input::upsampled>(4, a4_.data(), d_y);
    e.out = d_a4, e.gate = a4_.data();
    input_gradient<Output::up_adjoint_relu>(4, d_y, e);
    weight_gradient<Input::upsampled>(3, a3_.data(), d_a4);
    e.out = d_a3, e.gate = a3_.data();
    input_gradient<Output::up_adjoint_relu>(3, d_a4, e);
    weight_gradient<Input::plain>(2, p2_.data(), d_a3);
    e.out = d_a2, e.gate = p2_.data(), e.winner = winner2_.data();
    input_gradient<Output::unpool_relu>(2, d_a3, e);
    weight_gradient<Input::plain>(1, p1_.data(), d_a2);
    e.out = d_a1, e.gate = p1_.data(), e.winner = winner1_.data();
    input_gradient<Output::unpool_relu>(1, d_a2, e);
    weight_gradient<Input::plain>(0, x, d_a1);  // the image needs no gradient
  }

  int loss_blocks_ = 0;
  std::array<GradientGeometry, kLayers> plan_;
  core::DeviceArray<float> forward_weights_, backward_weights_;  // the two orders of the convolutions, at each weight's offset
  core::DeviceArray<float> p1_, p2_, a3_, a4_;
  core::DeviceArray<unsigned char> winner1_, winner2_;
  std::array<core::DeviceArray<float>, 2> gradients_;
  core::DeviceArray<float> partials_;
};

}  // namespace

StepInfo step_info() {
  return {"19_sgd_arranged", "GPU: element-wise layers fused into the convolutions, SGD writes the arranged weights", true,
          Accuracy::fp32, {{"threads", 256, 32, 1024, "Threads per block of SGD and the weight arrangement (a multiple of 32)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a multiple of 32 from 32 to 1024");
  return std::make_unique<GpuFused>(int(threads));
}

}  // namespace ae
