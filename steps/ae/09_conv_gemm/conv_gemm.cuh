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
// images x h x w x out_ch, both channel counts padded to multiples of 4 (a staging copy moves
// 4 channels, 16 bytes).
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
