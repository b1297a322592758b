// C (M x N) += A (M x K) B (K x N), row-major with leading dimensions lda, ldb, ldc. Tiles of
// 4 rows x 32 columns of C stay in registers while k runs: every element of B loaded serves
// four rows, every element of A 32 columns.
constexpr int kRows = 4, kCols = 32;
void gemm(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  const int full_m = M - M % kRows, full_n = N - N % kCols;
  for (int i = 0; i < full_m; i += kRows)
    for (int j = 0; j < full_n; j += kCols) {
      float acc[kRows][kCols] = {};
      for (int k = 0; k < K; ++k) {
        const float* b = B + size_t(k) * ldb + j;
        for (int r = 0; r < kRows; ++r) {
          const float a = A[size_t(i + r) * lda + k];
#pragma omp simd
          for (int c = 0; c < kCols; ++c) acc[r][c] += a * b[c];
        }
      }
      for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c) C[size_t(i + r) * ldc + j + c] += acc[r][c];
    }
  // The edges: rows below the last full tile, then columns right of it.
  for (int i = full_m; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float a = A[size_t(i) * lda + k];
#pragma omp simd
      for (int j = 0; j < N; ++j) C[size_t(i) * ldc + j] += a * B[size_t(k) * ldb + j];
    }
  if (full_n < N)
    for (int i = 0; i < full_m; ++i)
      for (int k = 0; k < K; ++k) {
        const float a = A[size_t(i) * lda + k];
        for (int j = full_n; j < N; ++j) C[size_t(i) * ldc + j] += a * B[size_t(k) * ldb + j];
      }
}

// col[(i * 9 + kh * 3 + kw)][y * w + x] = in[i][y + kh - 1][x + kw - 1], 0 outside the image.
void im2col(int channels, int h, int w, const float* in, float* col) {
  for (int i = 0; i < channels; ++i)
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) {
        float* row = col + size_t((i * 3 + kh) * 3 + kw) * h * w;
        for (int y = 0; y < h; ++y) {
          const int iy = y + kh - 1;
          for (int x = 0; x < w; ++x) {
            const int ix = x + kw - 1;
            row[y * w + x] = iy >= 0 && iy < h && ix >= 0 && ix < w ? in[(size_t(i) * h + iy) * w + ix] : 0.0f;
          }
        }
      }
}
