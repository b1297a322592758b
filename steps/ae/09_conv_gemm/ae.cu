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

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Without opting in, a block may have 48 KB of shared memory; every tile below stays under it.
constexpr size_t kSharedLimit = 48 * 1024;

// ---- The copies and the products ----

// Copies 16 bytes from global to shared memory through a register; with `valid` false it
// writes 16 zero bytes and reads nothing (the padding of the convolution). Both addresses must
// be 16-byte aligned.
__device__ __forceinline__ void copy16(float* shared_to, const float* global_from, bool valid) {
  *reinterpret_cast<float4*>(shared_to) =
      valid ? *reinterpret_cast<const float4*>(global_from) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
// d += a b for one value of k of a thread's four sums in a 16 x 8 part of the product: rows g
// and g + 8 (a[0], a[1]) by columns 2t and 2t + 1 (b[0], b[1]), for lane g x 4 + t of its warp.
// (These are the places mma.sync.m16n8k8 gives the lane's sums: 12.)
//   d[0] = D[g][2t], d[1] = D[g][2t + 1], d[2] = D[g + 8][2t], d[3] = D[g + 8][2t + 1]
__device__ __forceinline__ void fma_part(float (&d)[4], const float (&a)[2], const float (&b)[2]) {
  d[0] += a[0] * b[0];
  d[1] += a[0] * b[1];
  d[2] += a[1] * b[0];
  d[3] += a[1] * b[1];
}
// ---- Tiles ----

// A block computes a kM x kN tile of the product; each of its warps a kWarpM x kWarpN part of
// it as (kWarpM / 16) x (kWarpN / 8) parts of 16 x 8 (fma_part), whose sums stay in registers.
template <int M, int N, int WarpM, int WarpN, int MinBlocks>
struct Tile {
  static constexpr int kM = M, kN = N, kWarpM = WarpM, kWarpN = WarpN;
  static constexpr int kWarpsM = M / WarpM, kWarps = kWarpsM * (N / WarpN), kThreads = 32 * kWarps;
  static constexpr int kFragsM = WarpM / 16, kFragsN = WarpN / 8;
  static constexpr int kMinBlocks = MinBlocks;  // per SM, for __launch_bounds__ (registers)
  static_assert(M % WarpM == 0 && N % WarpN == 0 && WarpM % 16 == 0 && WarpN % 8 == 0, "whole 16 x 8 parts");
};
// 128 x 128: each operand value staged serves 128 products (the most arithmetic per byte of
// shared memory); 8 warps of 64 x 32, 64 sums per thread. Every product here uses it, the
// narrow ones too (conv5's 4 columns, conv1's 36 rows of weight gradient): 11 fits the tile
// to the product.
using BigTile = Tile<128, 128, 64, 32, 2>;

constexpr int kK = 32;      // the k extent of a staged tile
// Padding of the staged rows (the pitches 12's fragment reads need; 11's reads are free of
// bank conflicts with them too: a warp reads 8 rows g or 8 columns 2t + (0, 1), each value by
// the 4 or 8 lanes that share it).
constexpr int kPitchK = kK + 4;

template <class T>
constexpr size_t conv_shared_bytes() {
  return size_t(T::kM + T::kN) * kPitchK * sizeof(float);
}

// ---- The forward pass and the input gradient: one implicit GEMM ----

// A 3x3 convolution (padding 1) of NHWC activations: `in` is images x h x w x in_ch, `out`
// images x h x w x out_ch, both channel counts padded (multiples of 4).
struct ConvShape {
  int images = 0, h = 0, w = 0, in_ch = 0, out_ch = 0;
  int biased = 0;     // output channels with a bias (the real ones); 0: no bias
  bool relu = false;  // max(0, .) on the stored result
};

// out[m][n] = relu(bias[n] + sum over k < 9 in_ch of in(m, k) weight[n][k]), m = (image, y, x)
// the output pixel, k = tap x in_ch + c, tap = kh x 3 + kw, in(m, k) = in[image][y + kh - 1]
// [x + kw - 1][c] or 0 outside the image. `weight` is [out_ch][9][in_ch] (arrange_weights).
// Grid: x = tiles of pixels, y = tiles of output channels.
//
// Staging: a tile's kK values of k for one pixel are kK / 4 groups of 4 channels of one tap,
// each one 16-byte copy from the pixel's neighbour (or zeros). A thread
// always copies the same column group (its k offset) for the same rows (its pixels): it finds
// its pixels once, and per tile only the tap and channel of its column.
template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    conv_gemm(ConvShape s, const float* __restrict__ in, const float* __restrict__ weight,
              const float* __restrict__ bias, float* __restrict__ out) {
  float* staged_a = shared_floats();            // [kM][kPitchK]: pixels x k
  float* staged_b = staged_a + T::kM * kPitchK;  // [kN][kPitchK]: channels x k
  const int M = s.images * s.h * s.w, N = s.out_ch, K = 9 * s.in_ch;
  const int m0 = blockIdx.x * T::kM, n0 = blockIdx.y * T::kN;
  const int tiles = ceil_div(K, kK);
  const int tid = threadIdx.x;

  // Copy duties: 8 column groups of 4 floats per staged row; thread tid copies group tid % 8
  // of rows tid / 8, tid / 8 + kRowStep, ...
  constexpr int kRowStep = T::kThreads / (kK / 4);
  constexpr int kRowsA = ceil_div(T::kM, kRowStep), kRowsB = ceil_div(T::kN, kRowStep);
  const int group = tid % (kK / 4), first_row = tid / (kK / 4);
  // The pixels of this thread's A rows: where they are, and their row and column (a row far
  // outside the image for rows past the last pixel, so that every tap is padding).
  const float* pixel[kRowsA];
  int pixel_y[kRowsA], pixel_x[kRowsA];
#pragma unroll
  for (int i = 0; i < kRowsA; ++i) {
    const int m = m0 + first_row + i * kRowStep;
    const int x = m % s.w, y = m / s.w % s.h;
    const bool real = m < M;
    pixel[i] = in + size_t(real ? m : 0) * s.in_ch;
    pixel_y[i] = real ? y : -8;
    pixel_x[i] = x;
  }

  const auto stage_tile = [&](int tile) {
    const int k = tile * kK + 4 * group;
    const int tap = k / s.in_ch, c = k - tap * s.in_ch;  // 4 channels of one tap: in_ch % 4 == 0
    const int dy = tap / 3 - 1, dx = tap % 3 - 1;
    float* a = staged_a + first_row * kPitchK + 4 * group;
#pragma unroll
    for (int i = 0; i < kRowsA; ++i) {
      if (T::kM % kRowStep != 0 && first_row + i * kRowStep >= T::kM) break;
      const int y = pixel_y[i] + dy, x = pixel_x[i] + dx;
      const bool valid = tap < 9 && y >= 0 && y < s.h && x >= 0 && x < s.w;
      copy16(a + i * kRowStep * kPitchK, valid ? pixel[i] + (dy * s.w + dx) * s.in_ch + c : in, valid);
    }
    float* b = staged_b + first_row * kPitchK + 4 * group;
#pragma unroll
    for (int i = 0; i < kRowsB; ++i) {
      const int n = first_row + i * kRowStep;
      if (T::kN % kRowStep != 0 && n >= T::kN) break;
      const bool valid = n0 + n < N && k < K;
      copy16(b + i * kRowStep * kPitchK, valid ? weight + size_t(n0 + n) * K + k : weight, valid);
    }
  };

  // The warp's part of the tile, and the thread's place in its 16 x 8 parts (fma_part).
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int warp_m = warp % T::kWarpsM * T::kWarpM, warp_n = warp / T::kWarpsM * T::kWarpN;
  float sum[T::kFragsM][T::kFragsN][4] = {};

  for (int tile = 0; tile < tiles; ++tile) {
    __syncthreads();  // everyone is done with the previous tile
    stage_tile(tile);
    __syncthreads();  // everyone's copies of this one are in place

    const float* a = staged_a + (warp_m + g) * kPitchK;      // rows g and g + 8 of each part
    const float* b = staged_b + (warp_n + 2 * t) * kPitchK;  // columns 2t and 2t + 1
    // Two values of k per pass: unrolled further, the loads ptxas moves ahead spill the
    // 128 x 128 tile past its 128 registers (76 bytes fully unrolled, 12 at four).
#pragma unroll 2
    for (int k = 0; k < kK; ++k) {
      float fa[T::kFragsM][2], fb[T::kFragsN][2];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) fa[i][0] = a[i * 16 * kPitchK + k], fa[i][1] = a[(i * 16 + 8) * kPitchK + k];
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) fb[j][0] = b[j * 8 * kPitchK + k], fb[j][1] = b[(j * 8 + 1) * kPitchK + k];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) fma_part(sum[i][j], fa[i], fb[j]);
    }
  }

  // The epilogue: bias, ReLU, and two neighbouring channels of a pixel per 8-byte store.
#pragma unroll
  for (int j = 0; j < T::kFragsN; ++j) {
    const int n = n0 + warp_n + j * 8 + 2 * t;
    if (n >= N) continue;  // N % 4 == 0 and n even: n + 1 < N as well
    const float b0 = n < s.biased ? bias[n] : 0.0f, b1 = n + 1 < s.biased ? bias[n + 1] : 0.0f;
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int m = m0 + warp_m + i * 16 + g + 8 * half;
        if (m >= M) continue;
        float2 v = make_float2(sum[i][j][2 * half] + b0, sum[i][j][2 * half + 1] + b1);
        if (s.relu) v = make_float2(fmaxf(v.x, 0.0f), fmaxf(v.y, 0.0f));
        *reinterpret_cast<float2*>(out + size_t(m) * N + n) = v;
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
    throw core::RuntimeError("09_conv_gemm: " + std::to_string(c.width) + "-pixel rows do not fit a weight-gradient tile");
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

// The weights of one layer in the two orders the products read: forward[o][tap][c]
// (k = tap x in_ch + c contiguous per output channel), and for the input gradient backward[c][8 - tap][o] (the gradient of a 3x3
// convolution with respect to its input is the convolution of d_out with the mirrored kernel,
// in and out channels swapped). Padding entries are never written: zero since load().
struct LayerWeights {
  int in = 0, out = 0, in_ch = 0, out_ch = 0;  // real and padded channel counts
  const float* params = nullptr;               // (out, in, 3, 3), the reference layout
  float* forward = nullptr;
  float* backward = nullptr;
};
struct AllWeights {
  LayerWeights layer[kLayers];
};

// One launch for every layer: blockIdx.y is the layer.
__global__ void arrange_weights(AllWeights all) {
  const LayerWeights& l = all.layer[blockIdx.y];
  const size_t idx = global_index();
  if (idx >= size_t(l.out) * l.in * 9) return;
  const int tap = int(idx % 9), c = int(idx / 9 % l.in), o = int(idx / (9 * size_t(l.in)));
  const float v = l.params[idx];
  l.forward[(size_t(o) * 9 + tap) * l.in_ch + c] = v;
  l.backward[(size_t(c) * 9 + 8 - tap) * l.out_ch + o] = v;
}

// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh). SGD updates
// the weights in the reference layout; the products read the copies arrange_weights makes.
class ImplicitGemm final : public NhwcLayers {
 public:
  explicit ImplicitGemm(int threads) : NhwcLayers(threads) {}

 private:
  void allocate_more(int batch) override {
    // The arranged weights: each layer's two orders at 16-byte aligned offsets, zero padding.
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

  void convolve(int n, const Conv& c, int in_ch, int out_ch, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu};
    launch_conv<BigTile>(n * int(c.pixels()), s, in, weight, bias, out);
  }
  template <class T>
  void launch_conv(int M, const ConvShape& s, const float* in, const float* weight, const float* bias, float* out) {
    const dim3 grid(unsigned(ceil_div(M, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)));
    launch_grid(conv_gemm<T>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  // Before every forward pass: the weights arranged, all layers in one launch.
  void prepare(int) override {
    AllWeights all;
    size_t most = 0;
    for (int l = 0; l < kLayers; ++l) {
      all.layer[l] = {L_[l].in, L_[l].out, in_ch_[l], out_ch_[l], state_.params.data() + L_[l].weight,
                      forward_weights_.data() + arranged_at_[l], backward_weights_.data() + arranged_at_[l]};
      most = std::max(most, L_[l].weight_count());
    }
    launch_grid(arrange_weights, dim3(unsigned((most + threads_ - 1) / threads_), kLayers), dim3(threads_), 0, all);
  }

  // Bias and ReLU in the product's epilogue.
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    convolve(n, L_[l], in_ch_[l], out_ch_[l], in, forward_weights_.data() + arranged_at_[l], state_.params.data() + L_[l].bias,
             L_[l].out, relu, out);
  }

  // The weight and bias gradients of layer l (08's), and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in, c.out,
                in_ch_[l], out_ch_[l], c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  std::array<GradientGeometry, kLayers> plan_;
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
};

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
