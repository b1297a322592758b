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
