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
