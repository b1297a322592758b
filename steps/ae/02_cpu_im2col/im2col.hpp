// C (M x N) += A (M x K) B (K x N), row-major with leading dimensions lda, ldb, ldc: the
// plain i-k-j loop, whose inner loop runs along a row of B and a row of C (unit stride, vectors).
void gemm(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float a = A[size_t(i) * lda + k];
#pragma omp simd
      for (int j = 0; j < N; ++j) C[size_t(i) * ldc + j] += a * B[size_t(k) * ldb + j];
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
