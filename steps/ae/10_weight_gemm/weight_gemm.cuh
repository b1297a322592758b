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
// neighbour's channels for a tap, are contiguous in NHWC.
// Grid: x = tiles of m, y = tiles of n, z = splits. The blocks of the first m tile also sum
// the staged d_out columns for the bias.
template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    weight_gemm(WeightShape s, const float* __restrict__ in, const float* __restrict__ d_out,
                float* __restrict__ partial) {
  constexpr int kPitchA = pitch_mn(T::kM), kPitchB = pitch_mn(T::kN);
  float* staged_a = shared_floats();          // [kK][kPitchA]: pixels x (tap, c)
  float* staged_b = staged_a + kK * kPitchA;  // [kK][kPitchB]: pixels x out channel
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

  const auto stage_tile = [&](int tile) {
    float* a = staged_a + row_a * kPitchA + 4 * group_a;
#pragma unroll
    for (int i = 0; i < kRowsA; ++i) {
      const int r = row_a + i * kRowStepA;
      if (kK % kRowStepA != 0 && r >= kK) break;
      const int p = tile * kK + r;
      const int x = pixel_x[i] + dx, y = pixel_y[i] + dy;
      const bool valid = p < P && m < M && y >= 0 && y < s.h && x >= 0 && x < s.w;
      copy16(a + i * kRowStepA * kPitchA, valid ? in + size_t(p) * s.in_ch + shift : in, valid);
      for (pixel_x[i] += kK; pixel_x[i] >= s.w;) {
        pixel_x[i] -= s.w;
        if (++pixel_y[i] == s.h) pixel_y[i] = 0;
      }
    }
    float* b = staged_b + row_b * kPitchB + 4 * group_b;
#pragma unroll
    for (int i = 0; i < kRowsB; ++i) {
      const int r = row_b + i * kRowStepB;
      if (kK % kRowStepB != 0 && r >= kK) break;
      const int p = tile * kK + r;
      const bool valid = p < P && n < N;
      copy16(b + i * kRowStepB * kPitchB, valid ? d_out + size_t(p) * N + n : d_out, valid);
    }
  };

  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int warp_m = warp % T::kWarpsM * T::kWarpM, warp_n = warp / T::kWarpsM * T::kWarpN;
  const bool sums_bias = blockIdx.x == 0 && tid < T::kN;
  float sum[T::kFragsM][T::kFragsN][4] = {};
  float bias_sum = 0;

  for (int tile = first; tile < last; ++tile) {
    __syncthreads();
    stage_tile(tile);
    __syncthreads();

    const float* a = staged_a + warp_m + g;      // rows g and g + 8 of each part
    const float* b = staged_b + warp_n + 2 * t;  // columns 2t and 2t + 1
#pragma unroll 2
    for (int k = 0; k < kK; ++k) {
      float fa[T::kFragsM][2], fb[T::kFragsN][2];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i) fa[i][0] = a[k * kPitchA + i * 16], fa[i][1] = a[k * kPitchA + i * 16 + 8];
#pragma unroll
      for (int j = 0; j < T::kFragsN; ++j) fb[j][0] = b[k * kPitchB + j * 8], fb[j][1] = b[k * kPitchB + j * 8 + 1];
#pragma unroll
      for (int i = 0; i < T::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < T::kFragsN; ++j) fma_part(sum[i][j], fa[i], fb[j]);
    }
    if (sums_bias) {
      const float* column = staged_b + tid;
#pragma unroll 8
      for (int r = 0; r < kK; ++r) bias_sum += column[r * kPitchB];
    }
  }

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
