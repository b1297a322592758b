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
