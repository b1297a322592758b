// The same matrix transposed: colT[y * w + x][i * 9 + kh * 3 + kw] (the weight gradient's B).
void im2col_transposed(int channels, int h, int w, const float* in, float* colT) {
  const int K = channels * 9;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* row = colT + size_t(y * w + x) * K;
      for (int i = 0; i < channels; ++i)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            const int iy = y + kh - 1, ix = x + kw - 1;
            row[(i * 3 + kh) * 3 + kw] = iy >= 0 && iy < h && ix >= 0 && ix < w ? in[(size_t(i) * h + iy) * w + ix] : 0.0f;
          }
    }
}
