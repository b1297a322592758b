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

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// ---- The PTX instructions this step is built on ----

// Copies 16 bytes from global to shared memory without passing through registers; with
// `valid` false it writes 16 zero bytes and reads nothing (the padding of the convolution).
// Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async16(float* shared_to, const float* global_from, bool valid) {
  const unsigned to = unsigned(__cvta_generic_to_shared(shared_to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global_from), "r"(valid ? 16 : 0)
               : "memory");
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `kPending` of this thread's groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}
// Rounds to TF32 (10 mantissa bits) to nearest, ties away from zero; the tensor core would
// otherwise just drop the low 13 bits.
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// d += a b for a 16x8 tile of d, a 16x8 tile of a (row-major) and an 8x8 tile of b (column-major),
// spread over the 32 threads of a warp (g = lane / 4, t = lane % 4):
//   a[0] = A[g][t], a[1] = A[g + 8][t], a[2] = A[g][t + 4], a[3] = A[g + 8][t + 4]
//   b[0] = B[t][g], b[1] = B[t + 4][g]
//   d[0] = D[g][2t], d[1] = D[g][2t + 1], d[2] = D[g + 8][2t], d[3] = D[g + 8][2t + 1]
// (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// Rounds to bfloat16 (float's exponent, 7 stored mantissa bits) to nearest, ties to even, and
// returns the result as a float (its low 16 bits zero).
__device__ __forceinline__ float round_bf16(float x) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  return __uint_as_float(uint32_t(r) << 16);
}
// Two floats rounded to bfloat16 (to nearest, ties to even) in one register, `lo` in the low
// half: the fragment element of the lower k. (cvt.rn.bf16x2.f32 d, a, b puts a in the UPPER half.)
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// The same for two floats already rounded to bfloat16: their upper halves, moved (no rounding).
__device__ __forceinline__ uint32_t pack_rounded(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}
// d += a b as mma_tf32, in BF16 and with k = 16: a 16x16 tile of a, a 16x8 tile of b, two
// bfloat16 values per register, the lower k in the low half:
//   a[0] = A[g][2t, 2t + 1], a[1] = A[g + 8][2t, 2t + 1], a[2] = A[g][2t + 8, 2t + 9], a[3] = A[g + 8][2t + 8, 2t + 9]
//   b[0] = B[2t, 2t + 1][g], b[1] = B[2t + 8, 2t + 9][g]
//   d as for mma_tf32
// (PTX ISA, "Matrix Fragments for mma.m16n8k16", .bf16).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- Tiles ----

// A block computes a kM x kN tile of the product; each of its warps a kWarpM x kWarpN part of
// it as (kWarpM / 16) x (kWarpN / 8) mma tiles, whose sums stay in registers.
template <int M, int N, int WarpM, int WarpN, int MinBlocks>
struct Tile {
  static constexpr int kM = M, kN = N, kWarpM = WarpM, kWarpN = WarpN;
  static constexpr int kWarpsM = M / WarpM, kWarps = kWarpsM * (N / WarpN), kThreads = 32 * kWarps;
  static constexpr int kFragsM = WarpM / 16, kFragsN = WarpN / 8;
  static constexpr int kMinBlocks = MinBlocks;  // per SM, for __launch_bounds__ (registers)
  static_assert(M % WarpM == 0 && N % WarpN == 0 && WarpM % 16 == 0 && WarpN % 8 == 0, "whole mma tiles");
};
// 128 x 128: each operand value staged serves 128 products (the most arithmetic per byte of
// shared memory); 8 warps of 64 x 32, 64 sums per thread. For products large enough to fill
// the GPU with such tiles.
using BigTile = Tile<128, 128, 64, 32, 2>;
// 64 x 64, 4 warps of 32 x 32: four times the blocks, for the smaller products (conv3, and
// conv2 / conv4 at small batches).
using SmallTile = Tile<64, 64, 32, 32, 3>;
// 128 x 8, 4 warps of 32 x 8: products with at most 8 columns (conv5's 3 output channels
// padded to 4), where a wider tile would compute mostly zeros.
using NarrowTile = Tile<128, 8, 32, 8, 3>;

constexpr int kK = 32;      // the k extent of a staged tile: 4 TF32 or 2 BF16 mma steps between barriers
constexpr int kStages = 3;  // tiles in flight: the copy of tile k + 2 overlaps the products of tile k
// Padding of the staged rows, so that the fragment reads of a warp hit 32 different banks:
// a k-contiguous row of kK + 4 floats puts A[g][t] at bank 4g + t; a row along m or n of
// (length = 8 mod 32) floats puts A[t][g] at bank 8t + g.
constexpr int kPitchK = kK + 4;
constexpr int pitch_mn(int n) { return n + (8 - n % 32 + 32) % 32; }

// ---- The operands' precision (--precision): one mma step and its fragments ----

// Mma<O>::mma multiplies kStepK values of k, and the other functions read a warp's fragments
// for it from the staged tiles. conv_gemm stages both operands with k contiguous in rows of
// kPitchK floats: lane (g, t) reads row g from k = row_k(t) + row_step(kk) of the tile for the
// step at kk (`at`). weight_gemm stages them with k along rows of `pitch` floats: the lane
// reads column g from k row t + kk (`at`). The order of k inside a product is free as long as
// A and B agree, and BF16 uses that freedom: its lanes read other k than the fragment layout
// names, the same ones in A and B, so that their shared-memory reads are wide and free of bank
// conflicts.
enum class Operands { tf32, bf16 };
template <Operands O>
struct Mma;

template <>
struct Mma<Operands::tf32> {
  static constexpr int kStepK = 8;
  __device__ static float round(float x) { return __uint_as_float(to_tf32(x)); }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma_tf32(d, a, b); }
  // k = kk + t and kk + t + 4 as the layout names them: row g at bank 4g + t (the pitch of
  // 36), 32 different banks.
  __device__ static int row_k(int t) { return t; }
  __device__ static int row_step(int kk) { return kk; }
  __device__ static void rows_a(uint32_t (&a)[4], const float* at) {
    a[0] = to_tf32(at[0]);
    a[1] = to_tf32(at[8 * kPitchK]);
    a[2] = to_tf32(at[4]);
    a[3] = to_tf32(at[8 * kPitchK + 4]);
  }
  __device__ static void rows_b_rounded(uint32_t (&b)[2], const float* at) {
    b[0] = __float_as_uint(at[0]);  // weights are stored rounded
    b[1] = __float_as_uint(at[4]);
  }
  // k rows kk + t and kk + t + 4: column g at bank 8t + g (pitch_mn), 32 different banks.
  __device__ static void columns_a(uint32_t (&a)[4], const float* at, int pitch) {
    a[0] = to_tf32(at[0]);
    a[1] = to_tf32(at[8]);
    a[2] = to_tf32(at[4 * pitch]);
    a[3] = to_tf32(at[4 * pitch + 8]);
  }
  __device__ static void columns_b(uint32_t (&b)[2], const float* at, int pitch) {
    b[0] = to_tf32(at[0]);
    b[1] = to_tf32(at[4 * pitch]);
  }
};

template <>
struct Mma<Operands::bf16> {
  static constexpr int kStepK = 16;
  __device__ static float round(float x) { return round_bf16(x); }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma_bf16(d, a, b); }
  // The lane's k pairs (2t, 2t + 1) and (2t + 8, 2t + 9) of step h = kk / 16 are read from
  // k = 8t + 4h + (0, 1) and 8t + 4h + (2, 3): four contiguous floats of a row, one 16-byte
  // load, and over t and h each of the tile's 32 k once. A 16-byte load is served a quarter
  // warp at a time, rows g and g + 1 of t = 0..3: at the pitch of 36 floats row g + 1 starts 4
  // banks after row g, so the two fill each other's gaps (banks 8t + 4h + 0..3 and
  // 8t + 4h + 4..7): 32 different banks. Pairs read where the layout names them (k = 2t,
  // 2t + 1, one 8-byte load) would conflict 2-way at this pitch (rows g and g + 1 share 4
  // banks), and a pitch free of that (40) would not leave room for two 128 x 128 blocks per SM.
  __device__ static int row_k(int t) { return 8 * t; }
  __device__ static int row_step(int kk) { return kk / 4; }
  __device__ static void rows_a(uint32_t (&a)[4], const float* at) {
    const float4 upper = *reinterpret_cast<const float4*>(at);                // row g
    const float4 lower = *reinterpret_cast<const float4*>(at + 8 * kPitchK);  // row g + 8
    a[0] = pack_bf16(upper.x, upper.y);
    a[1] = pack_bf16(lower.x, lower.y);
    a[2] = pack_bf16(upper.z, upper.w);
    a[3] = pack_bf16(lower.z, lower.w);
  }
  __device__ static void rows_b_rounded(uint32_t (&b)[2], const float* at) {
    const float4 v = *reinterpret_cast<const float4*>(at);
    b[0] = pack_rounded(v.x, v.y);  // weights are stored rounded
    b[1] = pack_rounded(v.z, v.w);
  }
  // Here each value is a load of its own (k runs along the rows): the pairs are read from k
  // rows kk + t + (0, 4) and kk + t + (8, 12), so that as for TF32 the lanes t = 0..3 read rows
  // 8 banks apart, 32 different banks (pitch_mn). Rows 2t and 2t + 1, as the layout names them,
  // would put lanes t and t + 2 on the same banks.
  __device__ static void columns_a(uint32_t (&a)[4], const float* at, int pitch) {
    a[0] = pack_bf16(at[0], at[4 * pitch]);
    a[1] = pack_bf16(at[8], at[4 * pitch + 8]);
    a[2] = pack_bf16(at[8 * pitch], at[12 * pitch]);
    a[3] = pack_bf16(at[8 * pitch + 8], at[12 * pitch + 8]);
  }
  __device__ static void columns_b(uint32_t (&b)[2], const float* at, int pitch) {
    b[0] = pack_bf16(at[0], at[4 * pitch]);
    b[1] = pack_bf16(at[8 * pitch], at[12 * pitch]);
  }
};

template <class T>
constexpr size_t conv_shared_bytes() {
  return size_t(kStages) * (T::kM + T::kN) * kPitchK * sizeof(float);
}
template <class T>
constexpr size_t weight_shared_bytes() {
  return size_t(kStages) * kK * (pitch_mn(T::kM) + pitch_mn(T::kN)) * sizeof(float);
}

// ---- The forward pass and the input gradient: one implicit GEMM ----

// A 3x3 convolution (padding 1) of NHWC activations: `in` is images x h x w x in_ch, `out`
// images x h x w x out_ch, both channel counts padded (multiples of 4).
struct ConvShape {
  int images = 0, h = 0, w = 0, in_ch = 0, out_ch = 0;
  int biased = 0;     // output channels with a bias (the real ones); 0: no bias
  bool relu = false;  // max(0, .) on the stored result
  // With `pooled`: 2x2 max pooling in the epilogue. The result is not stored; its pooled
  // planes go to `pooled` (images x h/2 x w/2 x out_ch) and each window's winner to `winners`
  // (a byte per pooled value: the first maximum's position 0..3 in row-major order, 4 where
  // the maximum is 0, so that no gradient passes). The host asks for it only where the tile's
  // warps hold whole windows (pooled_tile()).
  float* pooled = nullptr;
  unsigned char* winners = nullptr;
};

// The pooling epilogue of conv_gemm for images kW pixels wide. A warp's kWarpM rows are whole
// image rows in pairs (kWarpM % (2 kW) == 0): the window of pixel row r (of the warp's rows,
// fragment row f = r / 8, lane group g = r % 8) has its right neighbour in lane g + 1 (the
// lane ^ 4: one shuffle) and the pixels below in fragment row f + kW / 8 of the same lanes. The
// lanes of even g hold the windows' top left pixels.
template <class T, int kW>
__device__ __forceinline__ void store_pooled(const ConvShape& s, const float (&sum)[T::kFragsM][T::kFragsN][4],
                                             const float* __restrict__ bias, int first_row, int n_first, int g, int M) {
  constexpr int kRows = 2 * T::kFragsM, kApart = kW / 8;
  static_assert(kRows % (2 * kApart) == 0, "whole windows in a warp");
  const int N = s.out_ch, pixels = s.h * kW;
#pragma unroll
  for (int j = 0; j < T::kFragsN; ++j) {
    const int n = n_first + j * 8;
    if (n >= N) continue;  // N % 8 == 0 (the host's condition): the same for the whole warp
    const float b0 = n < s.biased ? bias[n] : 0.0f, b1 = n + 1 < s.biased ? bias[n + 1] : 0.0f;
    float v[kRows][2], right[kRows][2];
#pragma unroll
    for (int f = 0; f < kRows; ++f) {
      v[f][0] = fmaxf(sum[f / 2][j][2 * (f % 2)] + b0, 0.0f);  // pooled layers have ReLU
      v[f][1] = fmaxf(sum[f / 2][j][2 * (f % 2) + 1] + b1, 0.0f);
      right[f][0] = __shfl_xor_sync(0xffffffffu, v[f][0], 4);
      right[f][1] = __shfl_xor_sync(0xffffffffu, v[f][1], 4);
    }
    if (g % 2) continue;
#pragma unroll
    for (int p = 0; p < kRows / (2 * kApart); ++p)
#pragma unroll
      for (int q = 0; q < kApart; ++q) {
        const int f = 2 * kApart * p + q;  // a fragment row of windows' top rows
        const int m = first_row + 8 * f + g;
        if (m >= M) continue;
        float best[2];
        unsigned char winner[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          // In row-major order; a later maximum must be strictly larger.
          float most = v[f][e];
          int k = 0;
          if (right[f][e] > most) most = right[f][e], k = 1;
          if (v[f + kApart][e] > most) most = v[f + kApart][e], k = 2;
          if (right[f + kApart][e] > most) most = right[f + kApart][e], k = 3;
          best[e] = most;
          winner[e] = most > 0.0f ? (unsigned char)k : (unsigned char)4;
        }
        const int image = m / pixels, in_image = m - image * pixels, y = in_image / kW, x = in_image % kW;
        const size_t at = ((size_t(image) * (s.h / 2) + y / 2) * (kW / 2) + x / 2) * N + n;
        *reinterpret_cast<float2*>(s.pooled + at) = make_float2(best[0], best[1]);
        *reinterpret_cast<uchar2*>(s.winners + at) = make_uchar2(winner[0], winner[1]);
      }
  }
}

// out[m][n] = relu(bias[n] + sum over k < 9 in_ch of in(m, k) weight[n][k]), m = (image, y, x)
// the output pixel, k = tap x in_ch + c, tap = kh x 3 + kw, in(m, k) = in[image][y + kh - 1]
// [x + kw - 1][c] or 0 outside the image. `weight` is [out_ch][9][in_ch], already rounded to
// the operands' precision O (arrange_weights). Grid: x = tiles of pixels, y = tiles of output
// channels.
//
// Staging: a tile's kK values of k for one pixel are kK / 4 groups of 4 channels of one tap,
// each one cp.async of 16 contiguous bytes from the pixel's neighbour (or zeros). A thread
// always copies the same column group (its k offset) for the same rows (its pixels): it finds
// its pixels once, and per tile only the tap and channel of its column.
template <class T, Operands O>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    conv_gemm(ConvShape s, const float* __restrict__ in, const float* __restrict__ weight,
              const float* __restrict__ bias, float* __restrict__ out) {
  float* staged_a = shared_floats();                           // [kStages][kM][kPitchK]: pixels x k
  float* staged_b = staged_a + kStages * T::kM * kPitchK;      // [kStages][kN][kPitchK]: channels x k
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

  const auto stage_tile = [&](int stage, int tile) {
    const int k = tile * kK + 4 * group;
    const int tap = k / s.in_ch, c = k - tap * s.in_ch;  // 4 channels of one tap: in_ch % 4 == 0
    const int dy = tap / 3 - 1, dx = tap % 3 - 1;
    float* a = staged_a + (stage * T::kM + first_row) * kPitchK + 4 * group;
#pragma unroll
    for (int i = 0; i < kRowsA; ++i) {
      if (T::kM % kRowStep != 0 && first_row + i * kRowStep >= T::kM) break;
      const int y = pixel_y[i] + dy, x = pixel_x[i] + dx;
      const bool valid = tap < 9 && y >= 0 && y < s.h && x >= 0 && x < s.w;
      cp_async16(a + i * kRowStep * kPitchK, valid ? pixel[i] + (dy * s.w + dx) * s.in_ch + c : in, valid);
    }
    float* b = staged_b + (stage * T::kN + first_row) * kPitchK + 4 * group;
#pragma unroll
    for (int i = 0; i < kRowsB; ++i) {
      const int n = first_row + i * kRowStep;
      if (T::kN % kRowStep != 0 && n >= T::kN) break;
      const bool valid = n0 + n < N && k < K;
      cp_async16(b + i * kRowStep * kPitchK, valid ? weight + size_t(n0 + n) * K + k : weight, valid);
    }
  };

  // The warp's part of the tile, and the thread's place in the mma fragments.
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int warp_m = warp % T::kWarpsM * T::kWarpM, warp_n = warp / T::kWarpsM * T::kWarpN;
  float sum[T::kFragsM][T::kFragsN][4] = {};

  // The pipeline: kStages - 1 tiles are requested before the first product; each iteration
  // waits for the oldest, requests one more into the buffer the previous iteration read, and
  // multiplies. A commit per iteration, even an empty one, keeps the group count in step.
#pragma unroll
  for (int p = 0; p < kStages - 1; ++p) {
    if (p < tiles) stage_tile(p, p);
    cp_async_commit();
  }
  for (int tile = 0; tile < tiles; ++tile) {
    cp_async_wait<kStages - 2>();  // this thread's copies of `tile` have landed ...
    __syncthreads();               // ... and everyone's; and everyone is done with tile - 1
    if (tile + kStages - 1 < tiles) stage_tile((tile + kStages - 1) % kStages, tile + kStages - 1);
    cp_async_commit();

    const int stage = tile % kStages;
    const float* a = staged_a + (stage * T::kM + warp_m + g) * kPitchK + Mma<O>::row_k(t);
    const float* b = staged_b + (stage * T::kN + warp_n + g) * kPitchK + Mma<O>::row_k(t);
#pragma unroll
    for (int kk = 0; kk < kK; kk += Mma<O>::kStepK) {
      uint32_t fa[T::kFragsM][4], fb[T::kFragsN][2];
      if constexpr (O == Operands::tf32) {
#pragma unroll
        for (int i = 0; i < T::kFragsM; ++i) Mma<O>::rows_a(fa[i], a + i * 16 * kPitchK + Mma<O>::row_step(kk));
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) Mma<O>::rows_b_rounded(fb[j], b + j * 8 * kPitchK + Mma<O>::row_step(kk));
#pragma unroll
        for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
          for (int j = 0; j < T::kFragsN; ++j) Mma<O>::mma(sum[i][j], fa[i], fb[j]);
      } else {
        // BF16's A fragments arrive as 16-byte loads, twice the registers of the fragment until
        // they are packed: B first, then each A fragment just before its products, so that the
        // 128 x 128 tile's sums and fragments fit 128 registers without spilling (in TF32's
        // order ptxas spills 12 bytes).
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) Mma<O>::rows_b_rounded(fb[j], b + j * 8 * kPitchK + Mma<O>::row_step(kk));
#pragma unroll
        for (int i = 0; i < T::kFragsM; ++i) {
          Mma<O>::rows_a(fa[i], a + i * 16 * kPitchK + Mma<O>::row_step(kk));
#pragma unroll
          for (int j = 0; j < T::kFragsN; ++j) Mma<O>::mma(sum[i][j], fa[i], fb[j]);
        }
      }
    }
  }
  cp_async_wait<0>();  // nothing may be in flight when the block ends (only empty groups are)

  // With pooling: the pooled planes and the winners instead of the result (the widths whose
  // windows a warp holds whole; the host asks for no other).
  if (s.pooled) {
    const int first_row = m0 + warp_m, n_first = n0 + warp_n + 2 * t;
    if constexpr (T::kWarpM % 16 == 0)
      if (s.w == 8) return store_pooled<T, 8>(s, sum, bias, first_row, n_first, g, M);
    if constexpr (T::kWarpM % 32 == 0)
      if (s.w == 16) return store_pooled<T, 16>(s, sum, bias, first_row, n_first, g, M);
    if constexpr (T::kWarpM % 64 == 0)
      if (s.w == 32) return store_pooled<T, 32>(s, sum, bias, first_row, n_first, g, M);
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

// ---- The weight gradient: an implicit GEMM over the minibatch's pixels, split ----

struct WeightShape {
  int images = 0, h = 0, w = 0, in_ch = 0, out_ch = 0;  // padded channel counts
  int splits = 0;                                       // blocks along the pixels (gridDim.z)
};

// For split z = blockIdx.z, a contiguous share of the minibatch's pixels p (whole kK tiles):
//   partial[z][m][n] = sum over its p of in(p, m) d_out[p][n],  m = tap x in_ch + c < 9 in_ch, n < out_ch
//   partial[z][9 in_ch out_ch + n] = sum over its p of d_out[p][n]  (the bias gradient)
// with in(p, m) = in[image][y + kh - 1][x + kw - 1][c] for p = (image, y, x), 0 outside.
// Both operands are staged with the pixel as the row (k-major): a pixel's channels, and its
// neighbour's channels for a tap, are contiguous in NHWC. The fragments then read them
// transposed (A[t][g]), which the row pitch (pitch_mn) keeps free of bank conflicts.
// Grid: x = tiles of m, y = tiles of n, z = splits. The blocks of the first m tile also sum
// the staged d_out columns for the bias (in float, outside the tensor cores).
template <class T, Operands O>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    weight_gemm(WeightShape s, const float* __restrict__ in, const float* __restrict__ d_out,
                float* __restrict__ partial) {
  constexpr int kPitchA = pitch_mn(T::kM), kPitchB = pitch_mn(T::kN);
  float* staged_a = shared_floats();                         // [kStages][kK][kPitchA]: pixels x (tap, c)
  float* staged_b = staged_a + kStages * kK * kPitchA;       // [kStages][kK][kPitchB]: pixels x out channel
  const int M = 9 * s.in_ch, N = s.out_ch, P = s.images * s.h * s.w;
  const int m0 = blockIdx.x * T::kM, n0 = blockIdx.y * T::kN;
  const int tiles = ceil_div(P, kK);
  const int first = int(long(tiles) * blockIdx.z / s.splits), last = int(long(tiles) * (blockIdx.z + 1) / s.splits);
  const int tid = threadIdx.x;

  // Copy duties. A: kM / 4 groups per staged row; the thread's group fixes its (tap, c).
  constexpr int kGroupsA = T::kM / 4, kRowStepA = T::kThreads / kGroupsA, kRowsA = ceil_div(kK, kRowStepA);
  constexpr int kGroupsB = T::kN / 4, kRowStepB = T::kThreads / kGroupsB, kRowsB = ceil_div(kK, kRowStepB);
  static_assert(T::kThreads % kGroupsA == 0 && T::kThreads % kGroupsB == 0, "whole rows per pass");
  const int group_a = tid % kGroupsA, row_a = tid / kGroupsA;
  const int group_b = tid % kGroupsB, row_b = tid / kGroupsB;
  const int m = m0 + 4 * group_a;
  const int tap = m / s.in_ch, c = m - tap * s.in_ch;
  const int dy = tap / 3 - 1, dx = tap % 3 - 1;
  const int shift = (dy * s.w + dx) * s.in_ch + c;  // from the pixel's channel 0 to its neighbour's channel c
  const int n = n0 + 4 * group_b;
  // The column and row of the thread's A pixels in the next tile it stages. Tiles are staged in
  // order, so they advance by kK pixels each time: no division per tile.
  int pixel_x[kRowsA], pixel_y[kRowsA];
#pragma unroll
  for (int i = 0; i < kRowsA; ++i) {
    const int p = first * kK + row_a + i * kRowStepA;
    pixel_x[i] = p % s.w;
    pixel_y[i] = p / s.w % s.h;
  }

  const auto stage_tile = [&](int stage, int tile) {
    float* a = staged_a + (stage * kK + row_a) * kPitchA + 4 * group_a;
#pragma unroll
    for (int i = 0; i < kRowsA; ++i) {
      const int r = row_a + i * kRowStepA;
      if (kK % kRowStepA != 0 && r >= kK) break;
      const int p = tile * kK + r;
      const int x = pixel_x[i] + dx, y = pixel_y[i] + dy;
      const bool valid = p < P && m < M && y >= 0 && y < s.h && x >= 0 && x < s.w;
      cp_async16(a + i * kRowStepA * kPitchA, valid ? in + size_t(p) * s.in_ch + shift : in, valid);
      for (pixel_x[i] += kK; pixel_x[i] >= s.w;) {
        pixel_x[i] -= s.w;
        if (++pixel_y[i] == s.h) pixel_y[i] = 0;
      }
    }
    float* b = staged_b + (stage * kK + row_b) * kPitchB + 4 * group_b;
#pragma unroll
    for (int i = 0; i < kRowsB; ++i) {
      const int r = row_b + i * kRowStepB;
      if (kK % kRowStepB != 0 && r >= kK) break;
      const int p = tile * kK + r;
      const bool valid = p < P && n < N;
      cp_async16(b + i * kRowStepB * kPitchB, valid ? d_out + size_t(p) * N + n : d_out, valid);
    }
  };

  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int warp_m = warp % T::kWarpsM * T::kWarpM, warp_n = warp / T::kWarpsM * T::kWarpN;
  const bool sums_bias = blockIdx.x == 0 && tid < T::kN;
  float sum[T::kFragsM][T::kFragsN][4] = {};
  float bias_sum = 0;

#pragma unroll
  for (int q = 0; q < kStages - 1; ++q) {
    if (first + q < last) stage_tile(q, first + q);
    cp_async_commit();
  }
  for (int tile = first; tile < last; ++tile) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    if (tile + kStages - 1 < last) stage_tile((tile - first + kStages - 1) % kStages, tile + kStages - 1);
    cp_async_commit();

    const int stage = (tile - first) % kStages;
    const float* a = staged_a + (stage * kK + t) * kPitchA + warp_m + g;
    const float* b = staged_b + (stage * kK + t) * kPitchB + warp_n + g;
#pragma unroll
    for (int kk = 0; kk < kK; kk += Mma<O>::kStepK) {
      uint32_t fa[T::kFragsM][4], fb[T::kFragsN][2];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) Mma<O>::columns_a(fa[i], a + kk * kPitchA + i * 16, kPitchA);
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) Mma<O>::columns_b(fb[j], b + kk * kPitchB + j * 8, kPitchB);
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) Mma<O>::mma(sum[i][j], fa[i], fb[j]);
    }
    if (sums_bias) {
      const float* column = staged_b + stage * kK * kPitchB + tid;
#pragma unroll 8
      for (int r = 0; r < kK; ++r) bias_sum += column[r * kPitchB];
    }
  }
  cp_async_wait<0>();

  float* split = partial + size_t(blockIdx.z) * (size_t(M) * N + N);
#pragma unroll
  for (int j = 0; j < T::kFragsN; ++j) {
    const int col = n0 + warp_n + j * 8 + 2 * t;
    if (col >= N) continue;
#pragma unroll
    for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_m + i * 16 + g + 8 * half;
        if (row < M)
          *reinterpret_cast<float2*>(split + size_t(row) * N + col) =
              make_float2(sum[i][j][2 * half], sum[i][j][2 * half + 1]);
      }
  }
  if (sums_bias && n0 + tid < N) split[size_t(M) * N + n0 + tid] = bias_sum;
}

// gradient[o][c][tap] = sum over z of partial[z][tap x in_ch + c][o] for the real channels
// (in, out), and gradient[out x in x 9 + o] = the bias sums: the reference layout, each
// element written once, the splits added in order. One thread per partial element (reads
// coalesced; the writes scatter, 1.2 MB at most).
__global__ void gather_weight_gradient(int in, int out, int in_ch, int out_ch, int splits,
                                       const float* __restrict__ partial, float* __restrict__ gradient) {
  const size_t count = size_t(9) * in_ch * out_ch + out_ch, idx = global_index();
  if (idx >= count) return;
  float total = 0;
  for (int z = 0; z < splits; ++z) total += partial[size_t(z) * count + idx];
  const int o = int(idx % out_ch), row = int(idx / out_ch);
  if (o >= out) return;
  if (row == 9 * in_ch) {
    gradient[size_t(out) * in * 9 + o] = total;
    return;
  }
  const int tap = row / in_ch, c = row % in_ch;
  if (c < in) gradient[(size_t(o) * in + c) * 9 + tap] = total;
}

// The gradient through pooling and ReLU from the winners conv_gemm's pooling epilogue kept: a
// window's gradient goes to its winner, none where the winner is 4 (the maximum was 0: the
// ReLU was off). A thread per float4 of the pooled gradient writes all four window positions
// (pool_backward_relu's layout), reading a byte per value instead of the four activations.
__global__ void unpool_winners(size_t quads, int h, int w, int ch, const unsigned char* __restrict__ winners,
                               const float* __restrict__ d_out, float* __restrict__ d_a) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % (w / 2)), y = int(pixel / (w / 2) % (h / 2));
  const size_t image = pixel / (size_t(w / 2) * (h / 2));
  const size_t at = ((image * h + 2 * y) * w + 2 * x) * ch + c;
  const uchar4 k = reinterpret_cast<const uchar4*>(winners)[q];
  const float4 g = reinterpret_cast<const float4*>(d_out)[q];
#pragma unroll
  for (int d = 0; d < 4; ++d)
    *reinterpret_cast<float4*>(d_a + at + (d / 2 * w + d % 2) * size_t(ch)) =
        make_float4(k.x == d ? g.x : 0.0f, k.y == d ? g.y : 0.0f, k.z == d ? g.z : 0.0f, k.w == d ? g.w : 0.0f);
}

// ---- conv5 at a4's resolution: direct FP32 kernels ----
//
// conv5 has 3 output channels: as a product its N is 3 (8 in the tile), so each value of its
// 256-channel input is multiplied by 27 weights and then thrown away, and 14 stages every one
// of them nine times (once per tap) through shared memory for that. Its input u4 is, besides,
// a4 copied four times (nearest upsampling). Here conv5 reads a4 itself: u4(y, x) = a4(y / 2,
// x / 2), and u4's zero padding is a4's (row -1 of u4 is row -1 of a4, row 2h is row h).
// Each pass is one kernel of FP32 multiply-adds that reads a4 once from memory.

constexpr int kOut5 = 3;       // conv5's output channels (the image's)
constexpr int kTaps5 = 9 * kOut5;  // a channel's weights: [o][tap]
constexpr int kRow5 = 28;      // kTaps5 padded to whole float4s in shared memory
constexpr int kChunk5 = 32;    // a4 channels staged at a time by conv5_forward
constexpr int kThreads5 = 256; // conv5_backward's block: a thread per input channel

struct Conv5Shape {
  int images = 0, h = 0, w = 0;  // a4's planes: h x w, conv5's output 2h x 2w
  int ch = 0, in = 0;            // a4's channels as stored, and the real ones (the weights')
  int band = 0;                  // conv5_forward: a4 rows per block
};

// y[image][2Y + i][2X + j][o] = bias[o] + sum over c, tap of u4(2Y + i + dy, 2X + j + dx)[c]
// weight[o][c][tap], o < 3, and y[...][3] = 0 (the stored fourth channel). weight is the
// reference layout (3, in, 3, 3): the float master weights. A thread computes the four output
// pixels of one a4 pixel (Y, X) (their 9 taps read a 3x3 window of a4); a block covers `band`
// rows of a4 of one image (grid: x = bands, y = images) and stages that band with a one-pixel
// zero halo, kChunk5 channels at a time, each channel a plane (channel-major, so that a warp's
// reads along X are consecutive words), with those channels' weights.
__global__ void conv5_forward(Conv5Shape s, const float* __restrict__ a4, const float* __restrict__ weight,
                              const float* __restrict__ bias, float* __restrict__ y) {
  const int cols = s.w + 2, plane = (s.band + 2) * cols + 1;  // +1: odd pitch, staging without bank conflicts
  float* planes = shared_floats();                             // [kChunk5][plane]
  float* w = planes + kChunk5 * plane;                         // [kChunk5][kRow5]; kChunk5 * plane % 4 == 0
  const int image = blockIdx.y, first = blockIdx.x * s.band;   // the band's first a4 row
  const int tid = threadIdx.x, row = tid / s.w, X = tid % s.w;  // blockDim = band x w
  float sum[2][2][kOut5] = {};

  for (int c0 = 0; c0 < s.ch; c0 += kChunk5) {
    __syncthreads();  // the previous chunk is read
    // A float4 (4 channels of a pixel) per copy: 8 per staged pixel, read along the channels.
    for (int q = tid; q < (s.band + 2) * cols * (kChunk5 / 4); q += blockDim.x) {
      const int pixel = q / (kChunk5 / 4), group = q % (kChunk5 / 4);
      const int Y = first - 1 + pixel / cols, Xs = pixel % cols - 1, c = c0 + 4 * group;
      float4 v = make_float4(0, 0, 0, 0);
      if (Y >= 0 && Y < s.h && Xs >= 0 && Xs < s.w && c < s.ch)
        v = *reinterpret_cast<const float4*>(a4 + ((size_t(image) * s.h + Y) * s.w + Xs) * s.ch + c);
      float* to = planes + 4 * group * plane + pixel;
      to[0] = v.x, to[plane] = v.y, to[2 * plane] = v.z, to[3 * plane] = v.w;
    }
    for (int q = tid; q < kChunk5 * kRow5; q += blockDim.x) {
      const int c = q / kRow5, k = q % kRow5, o = k / 9, tap = k % 9;
      w[q] = k < kTaps5 && c0 + c < s.in ? weight[(size_t(o) * s.in + c0 + c) * 9 + tap] : 0.0f;
    }
    __syncthreads();
    const int chunk = min(kChunk5, s.ch - c0);
    for (int c = 0; c < chunk; ++c) {
      const float* at = planes + c * plane + row * cols + X;  // the window's top left: a4 (Y - 1, X - 1)
      float a[3][3];
#pragma unroll
      for (int r = 0; r < 3; ++r)
#pragma unroll
        for (int q = 0; q < 3; ++q) a[r][q] = at[r * cols + q];
      float wc[kRow5];
#pragma unroll
      for (int k = 0; k < kRow5; k += 4) {
        const float4 v = *reinterpret_cast<const float4*>(w + c * kRow5 + k);
        wc[k] = v.x, wc[k + 1] = v.y, wc[k + 2] = v.z, wc[k + 3] = v.w;
      }
      // Output pixel (2Y + i, 2X + j), tap (dy, dx) reads u4 row 2Y + i + dy, which is a4 row
      // Y + floor((i + dy) / 2): window row (i + dy + 2) / 2 for dy = -1, 0, 1.
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
            for (int dx = -1; dx <= 1; ++dx) {
              const float v = a[(i + dy + 2) / 2][(j + dx + 2) / 2];
#pragma unroll
              for (int o = 0; o < kOut5; ++o) sum[i][j][o] += v * wc[o * 9 + (dy + 1) * 3 + dx + 1];
            }
    }
  }
  const int Y = first + row;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const size_t pixel = (size_t(image) * 2 * s.h + 2 * Y + i) * 2 * s.w + 2 * X + j;
      reinterpret_cast<float4*>(y)[pixel] =
          make_float4(sum[i][j][0] + bias[0], sum[i][j][1] + bias[1], sum[i][j][2] + bias[2], 0.0f);
    }
}

// conv5's backward pass and the upsampling's adjoint in one, at a4's resolution. For an a4
// pixel (Y, X), u4's four copies of it (2Y + i, 2X + j) met output pixel (2Y + i - dy, 2X + j -
// dx) through tap (dy, dx); so with
//   D[o][tap] = sum over i, j of d_y[2Y + i - dy][2X + j - dx][o]   (0 outside the image)
// the gradient of a4 (the upsampling's adjoint of conv5's input gradient, through conv4's ReLU)
// and conv5's weight gradient are both sums of the same 27 numbers:
//   d_a4[Y][X][c] = a4 > 0 ? sum over o, tap of weight[o][c][tap] D[o][tap] : 0
//   d_weight[o][c][tap] = sum over (Y, X) of a4[Y][X][c] D[o][tap]
//   d_bias[o] = sum over (Y, X) of D[o][centre]   (every output pixel once)
// A thread per channel keeps its 27 weights and its 27 gradient sums in registers; a block
// takes a contiguous share of the minibatch's a4 rows (blockIdx.x of gridDim.x, the splits),
// makes D for a row's pixels in shared memory (shared by all its channels), and writes its
// sums to partial[blockIdx.x] in the reference layout, weights then biases: sum_partials adds
// the splits in order.
__global__ void __launch_bounds__(kThreads5) conv5_backward(Conv5Shape s, const float* __restrict__ a4, const float* __restrict__ d_y,
                               const float* __restrict__ weight, float* __restrict__ d_a4, float* __restrict__ partial) {
  float* d = shared_floats();  // [s.w][kRow5]: D of the row's a4 pixels
  const int c = threadIdx.x, H = 2 * s.h, W = 2 * s.w;
  const bool real = c < s.in, stored = c < s.ch;
  float wc[kTaps5], dw[kTaps5] = {};
#pragma unroll
  for (int k = 0; k < kTaps5; ++k) wc[k] = real ? weight[(size_t(k / 9) * s.in + c) * 9 + k % 9] : 0.0f;
  float db[kOut5] = {};
  const long rows = long(s.images) * s.h;
  const long first = rows * blockIdx.x / gridDim.x, last = rows * (blockIdx.x + 1) / gridDim.x;
  for (long r = first; r < last; ++r) {
    const int image = int(r / s.h), Y = int(r % s.h);
    __syncthreads();  // the previous row's D is read
    for (int q = threadIdx.x; q < s.w * 9; q += blockDim.x) {
      const int X = q / 9, tap = q % 9, dy = tap / 3 - 1, dx = tap % 3 - 1;
      float4 v = make_float4(0, 0, 0, 0);
#ifdef STEPWISE_MUTANT_ONE_COPY  // the bug, in the test suite's build only: validation must catch it
      constexpr int kCopies = 1;  // the upsampling's adjoint takes one of u4's four copies of a4
#else
      constexpr int kCopies = 2;
#endif
#pragma unroll
      for (int i = 0; i < kCopies; ++i)
#pragma unroll
        for (int j = 0; j < kCopies; ++j) {
          const int yy = 2 * Y + i - dy, xx = 2 * X + j - dx;
          if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
            const float4 g = reinterpret_cast<const float4*>(d_y)[(size_t(image) * H + yy) * W + xx];
            v.x += g.x, v.y += g.y, v.z += g.z;
          }
        }
      float* to = d + X * kRow5 + tap;
      to[0] = v.x, to[9] = v.y, to[18] = v.z;
      if (tap == 0) d[X * kRow5 + kTaps5] = 0.0f;  // the padding, read with the last float4
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (int X = 0; X < s.w; ++X)
#pragma unroll
        for (int o = 0; o < kOut5; ++o) db[o] += d[X * kRow5 + o * 9 + 4];
    if (!stored) continue;
    const size_t at = (size_t(image) * s.h + Y) * s.w * s.ch + c;
    for (int X = 0; X < s.w; ++X) {
      const float a = a4[at + size_t(X) * s.ch];
      float dk[kRow5];
#pragma unroll
      for (int k = 0; k < kRow5; k += 4) {
        const float4 v = *reinterpret_cast<const float4*>(d + X * kRow5 + k);
        dk[k] = v.x, dk[k + 1] = v.y, dk[k + 2] = v.z, dk[k + 3] = v.w;
      }
      float g = 0;
#pragma unroll
      for (int k = 0; k < kTaps5; ++k) {
        g += wc[k] * dk[k];
        dw[k] += a * dk[k];
      }
      d_a4[at + size_t(X) * s.ch] = a > 0 ? g : 0.0f;
    }
  }
  float* split = partial + size_t(blockIdx.x) * (size_t(kTaps5) * s.in + kOut5);
  if (real)
#pragma unroll
    for (int k = 0; k < kTaps5; ++k) split[(size_t(k / 9) * s.in + c) * 9 + k % 9] = dw[k];
  if (threadIdx.x == 0)
#pragma unroll
    for (int o = 0; o < kOut5; ++o) split[size_t(kTaps5) * s.in + o] = db[o];
}

// The weights of one layer in the two orders the products read, rounded to the operands'
// precision O (TF32 or BF16) once here rather than in every block: forward[o][tap][c]
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
template <Operands O>
__global__ void arrange_weights(AllWeights all) {
  const LayerWeights& l = all.layer[blockIdx.y];
  const size_t idx = global_index();
  if (idx >= size_t(l.out) * l.in * 9) return;
  const int tap = int(idx % 9), c = int(idx / 9 % l.in), o = int(idx / (9 * size_t(l.in)));
  const float v = Mma<O>::round(l.params[idx]);
  l.forward[(size_t(o) * 9 + tap) * l.in_ch + c] = v;
  l.backward[(size_t(c) * 9 + 8 - tap) * l.out_ch + o] = v;
}

// Which tiles a product uses (--tiles): 0 by the size of the product, 1 always SmallTile,
// 2 always BigTile (NarrowTile for at most 8 columns in every case).
enum TileChoice { kTilesAuto = 0, kTilesSmall = 1, kTilesBig = 2 };
enum class TileKind { big, small, narrow };
const char* tile_name(TileKind k) { return k == TileKind::big ? "128x128" : k == TileKind::small ? "64x64" : "128x8"; }

// ---- Data parallelism: a copy of the weights on every rank, trained alike ----

// A 64-bit fingerprint of the weights: the sum, modulo 2^64, of a hash of each weight's index
// and bits (SplitMix64's finalizer, a bijection of 64-bit words). A sum of integers does not
// depend on its order, so equal weights give equal fingerprints on every rank; one bit changed
// anywhere changes it (two changes cancel with a chance of 2^-64). *fingerprint is zero before.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__global__ void fingerprint_weights(size_t n, const float* __restrict__ params, unsigned long long* __restrict__ fingerprint) {
  __shared__ unsigned long long warps[32];
  unsigned long long h = 0;
  for (size_t i = global_index(); i < n; i += size_t(gridDim.x) * blockDim.x)
    h += splitmix64(i << 32 | __float_as_uint(params[i]));  // n < 2^32
  for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = h;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block = 0;
    for (int w = 0; w < int(blockDim.x / 32); ++w) block += warps[w];
    atomicAdd(fingerprint, block);
  }
}

// How the gradients are summed over the ranks (--buckets): all at once after the backward pass
// (one), or each layer's as soon as the backward pass has written it (layers).
enum Buckets { kOneBucket = 0, kLayerBuckets = 1 };

// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh), on this rank's share of each
// minibatch, the gradients summed over the ranks before SGD. SGD updates
// the float master weights in the reference layout; the products read the rounded copies
// arrange_weights makes. O: the tensor cores' operands (--precision); everything else is the
// same for both.
template <Operands O>
class ImplicitGemm final : public NhwcLayers {
 public:
  ImplicitGemm(int threads, int tiles, int buckets) : NhwcLayers(threads), tiles_(tiles), buckets_(buckets) {}
  ~ImplicitGemm() override {
    if (!reducing_) return;
    cudaEventDestroy(made_);
    cudaEventDestroy(reduced_);
    cudaStreamDestroy(reducing_);
  }

  // --batch is the minibatch over all ranks, split evenly, so that any number of GPUs trains on
  // the same minibatches (and the check's gradients are the same sums). The check's minibatches
  // (4 images, or one a rank) may split unevenly: the loss divides by the whole minibatch either way.
  void load(const Problem& p, const std::vector<float>& initial, int batch) override {
    const core::Ranks& world = core::ranks();
    if (p.batch % world.size)
      throw core::UsageError("--batch " + std::to_string(p.batch) + ": the minibatch over all ranks, split evenly; want a multiple of the " +
                             std::to_string(world.size) + " ranks");
    if (batch < world.size)
      throw core::UsageError("minibatches of " + std::to_string(batch) + " images leave a rank of the " +
                             std::to_string(world.size) + " without one");
    whole_ = batch;
    first_ = int(long(batch) * world.rank / world.size);
    const int mine = int(long(batch) * (world.rank + 1) / world.size) - first_;
    comm_ = core::world_communicator();  // the first call waits for every rank
    if (!reducing_) {
      // A stream of its own for the sums, not ordered after the kernels' (the legacy default
      // stream, which a blocking stream would wait for), and first to get SMs as blocks finish.
      int lowest = 0, highest = 0;
      CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
      CUDA_CHECK(cudaStreamCreateWithPriority(&reducing_, cudaStreamNonBlocking, highest));
      CUDA_CHECK(cudaEventCreateWithFlags(&made_, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&reduced_, cudaEventDisableTiming));
      barrier_.resize(1);
      CUDA_CHECK(cudaMemset(barrier_.data(), 0, sizeof(float)));
    }
    NhwcLayers::load(p, initial, mine);
    reserve_fingerprints(std::max(p.steps(), 2));
    CUDA_CHECK(cudaMemset(fingerprints_.data(), 0, fingerprints_.size() * sizeof(unsigned long long)));
  }

  // All ranks loaded before any rank's timed training starts: a one-float sum over the ranks.
  void wait_for_ranks() override {
    NCCL_CHECK(ncclAllReduce(barrier_.data(), barrier_.data(), 1, ncclFloat, ncclSum, comm_, reducing_));
    CUDA_CHECK(cudaStreamSynchronize(reducing_));
  }

  // LayeredTraining's step on this rank's images of the minibatch; its backward pass starts the
  // buckets' sums (conv_backward), and SGD waits for the last of them.
  void train(long long steps) override {
    state_.reserve(t_ + steps);
    reserve_fingerprints(t_ + steps);
    const size_t n = state_.params.size();
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = data_.data() + (minibatch_start(t_, whole_, p_->images()) + first_) * image_floats();
      forward(x, batch_);
      backward(x, state_.losses() + t_);
      CUDA_CHECK(cudaEventRecord(reduced_, reducing_));
      CUDA_CHECK(cudaStreamWaitEvent(stream_, reduced_, 0));
      launch(sgd, n, n, float(p_->lr), float(p_->momentum), state_.gradient.data(), state_.velocity.data(),
             state_.params.data());
      launch_grid(fingerprint_weights, dim3(unsigned(sms_)), dim3(threads_), 0, n, state_.params.data(),
                  fingerprints_.data() + t_);
    }
  }

  // The weights and the summed gradient (the same on every rank), the losses summed over the
  // ranks (each rank's is its images' share of the minibatch's mean), and the ranks' fingerprints
  // after every step compared: their lowest against their highest.
  void store(Trained& out) override {
    state_.store(out, t_);
    out.replicas_compared = "a 64-bit fingerprint of the weights after every training step, the lowest and the highest of the " +
                            std::to_string(core::ranks().size) + " ranks'";
    out.replicas_differ.clear();
    if (!t_) return;
    const size_t steps = size_t(t_);
    CUDA_CHECK(cudaEventRecord(made_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(reducing_, made_, 0));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclAllReduce(state_.losses(), summed_losses_.data(), steps, ncclFloat, ncclSum, comm_, reducing_));
    NCCL_CHECK(ncclAllReduce(fingerprints_.data(), lowest_.data(), steps, ncclUint64, ncclMin, comm_, reducing_));
    NCCL_CHECK(ncclAllReduce(fingerprints_.data(), highest_.data(), steps, ncclUint64, ncclMax, comm_, reducing_));
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaStreamSynchronize(reducing_));
    std::vector<unsigned long long> lowest(steps), highest(steps);
    CUDA_CHECK(cudaMemcpy(out.losses.data(), summed_losses_.data(), steps * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lowest.data(), lowest_.data(), steps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(highest.data(), highest_.data(), steps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    for (size_t s = 0; s < steps; ++s)
      if (lowest[s] != highest[s]) {
        char range[64];
        snprintf(range, sizeof range, "%016llx to %016llx", lowest[s], highest[s]);
        out.replicas_differ = "after training step " + std::to_string(s + 1) + " of " + std::to_string(steps) +
                              " (fingerprints " + range + ")";
        break;
      }
  }

  std::optional<Accuracy> accuracy() const override { return O == Operands::bf16 ? Accuracy::bf16 : Accuracy::tf32; }

  void describe(core::Fields& params) const override {
    LayeredTraining::describe(params);
    params.set("tiles", tiles_);
    if (!p_) return;
    // What the choice makes of a rank's share of the problem's minibatch (the timed run's;
    // validation loads the step again with smaller ones): the tiles of each product, and the
    // weight gradient's splits.
    const int mine = p_->batch / core::ranks().size;
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, mine);
      params.append("gemm")
          .set("forward", tile_name(conv_tile(mine, L_[l], out_ch_[l])))
          .set("input_gradient", l ? tile_name(conv_tile(mine, L_[l], in_ch_[l])) : "none")
          .set("weight_gradient", tile_name(plan.kind))
          .set("splits", plan.splits)
          .set("pooled_epilogue", l < kPooled && pooled_tile(mine, l));
    }
    params.append("gemm")
        .set("forward", "direct")
        .set("input_gradient", "direct")
        .set("weight_gradient", "direct")
        .set("splits", conv5_splits(mine));
  }

 private:
  void allocate_more(int batch) override {
    if (!configured_) configure_kernels();
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
    // The weight gradients' splits, and room for their partial sums (and the loss's before them).
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
    size_t partials = loss_partials(batch);
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, batch);
      weight_tile_[l] = plan.kind;
      splits_[l] = plan.splits;
      partials = std::max(partials, size_t(splits_[l]) * (size_t(9) * in_ch_[l] * out_ch_[l] + out_ch_[l]));
    }
    // conv5: its direct kernels' shape, the gradient of a4 they write (u4 and its gradient are
    // never made), and its weight gradient's splits.
    const Conv& c5 = L_[kConv5];
    if (c5.out != kOut5 || out_ch_[kConv5] != 4 || in_ch_[kConv5] > kThreads5 || in_ch_[kConv5] != out_ch_[kConv5 - 1] ||
        c5.height != 2 * L_[kConv5 - 1].height || c5.width != 2 * L_[kConv5 - 1].width)
      throw core::UsageError("conv5's direct kernels want 3 outputs, at most 256 inputs, after x2 upsampling");
    d_a4_.resize(size_t(batch) * L_[kConv5 - 1].pixels() * out_ch_[kConv5 - 1]);
    // The winners of a forward pass of capacity_ images (training's minibatch, or reconstruct()'s).
    for (int l = 0; l < kPooled; ++l) winners_[l].resize(size_t(capacity_) * L_[l].pixels() / 4 * out_ch_[l]);
    partials = std::max(partials, size_t(conv5_splits(batch)) * (size_t(kTaps5) * c5.in + kOut5));
    partials_.resize(partials);
  }

  static constexpr int kConv5 = kLayers - 1;  // conv5's index

  Conv5Shape conv5_shape(int n) const {
    const Conv& c4 = L_[kConv5 - 1];
    Conv5Shape s{n, c4.height, c4.width, in_ch_[kConv5], L_[kConv5].in, 1};
    while (s.band < 8 && s.h % (2 * s.band) == 0 && 2 * s.band * s.w <= 1024) s.band *= 2;
    return s;
  }
  // Blocks of conv5_backward: one wave (a row of a4 at least each).
  int conv5_splits(int batch) const {
    return int(std::min(long(batch) * L_[kConv5 - 1].height, long(conv5_resident_) * sms_));
  }

  // The GEMM kernels may stage more than the 48 KB of shared memory a block gets without asking.
  void configure_kernels() {
    const auto allow = [](const void* kernel, size_t bytes) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    };
    allow(reinterpret_cast<const void*>(conv_gemm<BigTile, O>), conv_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<SmallTile, O>), conv_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<NarrowTile, O>), conv_shared_bytes<NarrowTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<BigTile, O>), weight_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>), weight_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>), weight_shared_bytes<NarrowTile>());
    // How many blocks of each split kernel an SM holds at once (registers, shared memory and
    // threads, as the compiled kernels need them): a wave is that times the SMs.
    const auto resident = [](const void* kernel, int threads, size_t bytes) {
      int blocks = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, bytes));
      return std::max(blocks, 1);
    };
    weight_resident_[int(TileKind::big)] = resident(reinterpret_cast<const void*>(weight_gemm<BigTile, O>),
                                                    BigTile::kThreads, weight_shared_bytes<BigTile>());
    weight_resident_[int(TileKind::small)] = resident(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>),
                                                      SmallTile::kThreads, weight_shared_bytes<SmallTile>());
    weight_resident_[int(TileKind::narrow)] = resident(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>),
                                                       NarrowTile::kThreads, weight_shared_bytes<NarrowTile>());
    conv5_resident_ = resident(reinterpret_cast<const void*>(conv5_backward), kThreads5,
                               size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float));
    configured_ = true;
  }

  // The forward and input-gradient products: pixels x `columns` channels. Big tiles when they
  // alone fill the GPU at two blocks per SM (7/8 of a wave or more); small ones otherwise, four
  // times as many blocks.
  TileKind conv_tile(int n, const Conv& c, int columns) const {
    if (columns <= 8) return TileKind::narrow;
    if (tiles_ != kTilesAuto) return tiles_ == kTilesBig ? TileKind::big : TileKind::small;
    const long blocks = long(ceil_div(int(n * c.pixels()), BigTile::kM)) * ceil_div(columns, BigTile::kN);
    return blocks * 8 >= 7L * 2 * sms_ ? TileKind::big : TileKind::small;
  }

  void convolve(int n, const Conv& c, int in_ch, int out_ch, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out, float* pooled = nullptr, unsigned char* winners = nullptr) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu, pooled, winners};
    const int M = n * int(c.pixels());
    switch (conv_tile(n, c, out_ch)) {
      case TileKind::big:
        return launch_conv<BigTile>(M, s, in, weight, bias, out);
      case TileKind::small:
        return launch_conv<SmallTile>(M, s, in, weight, bias, out);
      case TileKind::narrow:
        return launch_conv<NarrowTile>(M, s, in, weight, bias, out);
    }
  }
  template <class T>
  void launch_conv(int M, const ConvShape& s, const float* in, const float* weight, const float* bias, float* out) {
    const dim3 grid(unsigned(ceil_div(M, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)));
    launch_grid(conv_gemm<T, O>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // The weight gradient of layer l: (9 in) x out. Big tiles where both sides fill them; the
  // pixel sum is split into as many parts as keep the blocks within one wave (the blocks all
  // SMs hold at once), with at least 4 staged tiles per split. (14 to 21 rounded the splits
  // up to about twice the SMs' blocks: 270 blocks for a wave of 264 at batch 256, a second
  // wave of 6 blocks that took as long as the first.)
  struct WeightPlan {
    TileKind kind;
    int splits;
  };
  WeightPlan weight_plan(int l, int batch) const {
    const int M = 9 * in_ch_[l], N = out_ch_[l];
    TileKind kind = TileKind::small;
    if (N <= 8) kind = TileKind::narrow;
    else if (tiles_ == kTilesBig || (tiles_ == kTilesAuto && M >= BigTile::kM && N >= BigTile::kN)) kind = TileKind::big;
    const int tm = kind == TileKind::big ? BigTile::kM : kind == TileKind::small ? SmallTile::kM : NarrowTile::kM;
    const int tn = kind == TileKind::big ? BigTile::kN : kind == TileKind::small ? SmallTile::kN : NarrowTile::kN;
    const int blocks = ceil_div(M, tm) * ceil_div(N, tn);
    const int wave = sms_ * weight_resident_[int(kind)];
    const int tiles = ceil_div(batch * int(L_[l].pixels()), kK);
    return {kind, std::max(1, std::min(wave / blocks, tiles / 4))};
  }

  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const WeightShape s{batch_, c.height, c.width, in_ch_[l], out_ch_[l], splits_[l]};
    switch (weight_tile_[l]) {
      case TileKind::big:
        launch_weight<BigTile>(s, in, d_out);
        break;
      case TileKind::small:
        launch_weight<SmallTile>(s, in, d_out);
        break;
      case TileKind::narrow:
        launch_weight<NarrowTile>(s, in, d_out);
        break;
    }
    launch(gather_weight_gradient, size_t(9) * s.in_ch * s.out_ch + s.out_ch, c.in, c.out, s.in_ch, s.out_ch, s.splits,
           partials_.data(), state_.gradient.data() + c.weight);  // the bias follows its weights
  }
  template <class T>
  void launch_weight(const WeightShape& s, const float* in, const float* d_out) {
    const dim3 grid(unsigned(ceil_div(9 * s.in_ch, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)), unsigned(s.splits));
    launch_grid(weight_gemm<T, O>, grid, dim3(T::kThreads), weight_shared_bytes<T>(), s, in, d_out, partials_.data());
  }

  // Before every forward pass: the weights rounded and arranged, all layers in one launch.
  void prepare(int) override {
    AllWeights all;
    size_t most = 0;
    for (int l = 0; l < kLayers; ++l) {
      all.layer[l] = {L_[l].in, L_[l].out, in_ch_[l], out_ch_[l], state_.params.data() + L_[l].weight,
                      forward_weights_.data() + arranged_at_[l], backward_weights_.data() + arranged_at_[l]};
      most = std::max(most, L_[l].weight_count());
    }
    // conv5's direct kernels read the float master weights: only the products' layers.
    launch_grid(arrange_weights<O>, dim3(unsigned((most + threads_ - 1) / threads_), kConv5), dim3(threads_), 0, all);
  }

  // Bias and ReLU in the product's epilogue. conv5 reads a4 (a4_), not its upsampled copy
  // `in` (u4), which upsample() no longer writes.
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    if (l == kConv5) {
      const Conv5Shape s = conv5_shape(n);
      const int plane = (s.band + 2) * (s.w + 2) + 1;
      launch_grid(conv5_forward, dim3(unsigned(s.h / s.band), unsigned(n)), dim3(unsigned(s.band * s.w)),
                  size_t(kChunk5) * (plane + kRow5) * sizeof(float), s, a4_.data(),
                  state_.params.data() + L_[l].weight, state_.params.data() + L_[l].bias, out);
      return;
    }
    // conv1 and conv2: pooled in the epilogue where the tile's warps hold whole windows; a1 (a2)
    // is then not written, and pool() and pool_backward() use what the epilogue kept.
    pooled_[l] = l < kPooled && pooled_tile(n, l);
    float* pooled = !pooled_[l] ? nullptr : l == 0 ? p1_.data() : p2_.data();
    convolve(n, L_[l], in_ch_[l], out_ch_[l], in, forward_weights_.data() + arranged_at_[l], state_.params.data() + L_[l].bias,
             L_[l].out, relu, out, pooled, pooled ? winners_[l].data() : nullptr);
  }

  // Whether layer l's product at n images can pool in its epilogue: widths of 8, 16 or 32
  // whose window pairs of rows fit a warp's rows, whole groups of 8 channels.
  bool pooled_tile(int n, int l) const {
    const int w = L_[l].width, columns = out_ch_[l];
    if ((w != 8 && w != 16 && w != 32) || L_[l].height % 2 || columns % 8) return false;
    const TileKind kind = conv_tile(n, L_[l], columns);
    const int warp_rows = kind == TileKind::big ? BigTile::kWarpM : kind == TileKind::small ? SmallTile::kWarpM : NarrowTile::kWarpM;
    return warp_rows % (2 * w) == 0;
  }
  void pool(int l, int n, const float* a, float* pooled) override {
    if (!pooled_[l]) NhwcLayers::pool(l, n, a, pooled);
  }
  void pool_backward(int l, const float* a, const float* pooled, const float* d_pooled, float* d_a) override {
    if (!pooled_[l]) return NhwcLayers::pool_backward(l, a, pooled, d_pooled, d_a);
    const size_t quads = size_t(batch_) * L_[l].pixels() / 4 * out_ch_[l] / 4;
    launch(unpool_winners, quads, quads, L_[l].height, L_[l].width, out_ch_[l], winners_[l].data(), d_pooled, d_a);
  }

  // Upsampling a4 is left to conv5, which reads a4 itself.
  void upsample(int l, int n, const float* a, float* up) override {
    if (l != kConv5 - 1) NhwcLayers::upsample(l, n, a, up);
  }
  // conv5's backward pass ends at the gradient of a4 (d_a4_), through upsampling and conv4's
  // ReLU: nothing is left for upsample_backward, and conv4's backward pass reads d_a4_.
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    if (l != kConv5 - 1) NhwcLayers::upsample_backward(l, d_up, a, d_a);
  }

  // The weight and bias gradients of layer l, and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    if (l == kConv5) {
      const int splits = conv5_splits(batch_);
      const size_t count = size_t(kTaps5) * L_[l].in + kOut5;
      launch_grid(conv5_backward, dim3(unsigned(splits)), dim3(kThreads5), size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float),
                  conv5_shape(batch_), a4_.data(), d_out, state_.params.data() + L_[l].weight, d_a4_.data(), partials_.data());
      launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                  count, splits, partials_.data(), state_.gradient.data() + L_[l].weight);  // the bias follows its weights
      reduce(l);
      return;
    }
    if (l == kConv5 - 1) d_out = d_a4_.data();
    weight_gradient(l, in, d_out);
    reduce(l);  // beside the input gradient's product and the layers below
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  // Layer l's weight and bias gradients are written: the sum over the ranks of their bucket
  // starts on the reducing stream once this stream gets there (in place: every rank ends with
  // the sum). With one bucket, all of them once conv1's are written.
  void reduce(int l) {
    if (buckets_ == kOneBucket && l != 0) return;
    const size_t from = buckets_ == kOneBucket ? 0 : L_[l].weight;
    const size_t to = buckets_ == kOneBucket ? state_.gradient.size() : L_[l].bias + L_[l].out;
    float* gradient = state_.gradient.data() + from;
    CUDA_CHECK(cudaEventRecord(made_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(reducing_, made_, 0));
#ifdef STEPWISE_MUTANT_REDUCE_TO_ROOT  // the bug, in the test suite's build only: the ranks' fingerprints must catch it
    if (l == kConv5 || buckets_ == kOneBucket) {  // rank 0 alone gets the sum; the others keep their own share
      NCCL_CHECK(ncclReduce(gradient, gradient, to - from, ncclFloat, ncclSum, 0, comm_, reducing_));
      return;
    }
#endif
    NCCL_CHECK(ncclAllReduce(gradient, gradient, to - from, ncclFloat, ncclSum, comm_, reducing_));
  }

  // NhwcLayers' loss over the whole minibatch: this rank's squared errors and d_y are divided by
  // the outputs of all ranks' images, so that their sum over the ranks is the minibatch's mean.
  void loss_gradient(const float* x, float*, float* d_y, float* loss) override {
    const size_t outputs = size_t(whole_) * p_->data->image_size(), stored = size_t(batch_) * L_[4].pixels() * image_ch_;
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    const unsigned blocks = unsigned((stored + threads_ - 1) / threads_);
    launch_grid(ae::loss_gradient, dim3(blocks), dim3(threads_), threads_ * sizeof(float), stored, p_->data->channels,
                image_ch_, scale, mean, d_y, x, partials_.data());
    launch_grid(sum_partials, dim3(1), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float), size_t(1), int(blocks),
                partials_.data(), loss);
  }

  // Room for the fingerprints of `steps` training steps since load() (zero until trained,
  // those already made kept), and for their and the losses' sums over the ranks.
  void reserve_fingerprints(long long steps) {
    if (size_t(steps) <= fingerprints_.size()) return;
    std::vector<unsigned long long> kept(fingerprints_.size());
    fingerprints_.download(kept.data());
    kept.resize(size_t(steps), 0);
    fingerprints_.upload(kept.data(), kept.size());
    lowest_.resize(kept.size()), highest_.resize(kept.size()), summed_losses_.resize(kept.size());
  }

  int tiles_;
  int buckets_;
  int whole_ = 0, first_ = 0;  // the minibatch over all ranks, and this rank's first image of it (batch_: its images)
  ncclComm_t comm_ = nullptr;
  cudaStream_t reducing_ = nullptr;          // the sums over the ranks
  cudaEvent_t made_ = nullptr, reduced_ = nullptr;  // a bucket's gradients written; the last sum done
  core::DeviceArray<float> barrier_;         // wait_for_ranks()'s one float
  core::DeviceArray<unsigned long long> fingerprints_, lowest_, highest_;  // by training step since load()
  core::DeviceArray<float> summed_losses_;
  bool configured_ = false;
  int sms_ = 0;
  std::array<int, 3> weight_resident_{};  // blocks per SM of weight_gemm, by TileKind
  int conv5_resident_ = 1;                // and of conv5_backward
  std::array<int, kLayers> splits_{};  // weight-gradient splits
  std::array<TileKind, kLayers> weight_tile_{};
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
  core::DeviceArray<float> d_a4_;  // the gradient of a4, from conv5_backward
  static constexpr int kPooled = 2;  // conv1 and conv2 are pooled
  std::array<bool, kLayers> pooled_{};  // by layer: pooled in the last forward pass's epilogue
  std::array<core::DeviceArray<unsigned char>, kPooled> winners_;  // a byte per pooled value
};

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
