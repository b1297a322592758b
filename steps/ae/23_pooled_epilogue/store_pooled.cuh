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
