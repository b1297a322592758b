// Adds this image's share of the weight and bias gradients; writes the input gradient when
// d_in is given: d_in[i][y][x] gathers every output that read in[i][y][x].
void conv_backward(const Conv& c, const float* params, const float* in, const float* d_out, float* gradient,
                   float* d_in) {
  const int h = c.height, w = c.width;
  const float* weight = params + c.weight;
  for (int o = 0; o < c.out; ++o) {
    const float* d_o = d_out + size_t(o) * h * w;
    float bias_sum = 0;
    for (int j = 0; j < h * w; ++j) bias_sum += d_o[j];
    gradient[c.bias + o] += bias_sum;
    for (int i = 0; i < c.in; ++i) {
      const float* in_i = in + size_t(i) * h * w;
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          float sum = 0;
          for (int y = std::max(0, 1 - kh); y < std::min(h, h + 1 - kh); ++y)
            for (int x = std::max(0, 1 - kw); x < std::min(w, w + 1 - kw); ++x)
              sum += d_o[y * w + x] * in_i[(y + kh - 1) * w + (x + kw - 1)];
          gradient[c.weight + ((size_t(o) * c.in + i) * 3 + kh) * 3 + kw] += sum;
        }
    }
  }
  if (!d_in) return;
  std::fill(d_in, d_in + size_t(c.in) * h * w, 0.0f);
  for (int i = 0; i < c.in; ++i) {
    float* d_i = d_in + size_t(i) * h * w;
    for (int o = 0; o < c.out; ++o) {
      const float* d_o = d_out + size_t(o) * h * w;
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          const float k = weight[((size_t(o) * c.in + i) * 3 + kh) * 3 + kw];
          // Input (y, x) fed output (y + 1 - kh, x + 1 - kw) through this tap.
          for (int y = std::max(0, kh - 1); y < std::min(h, h + kh - 1); ++y)
            for (int x = std::max(0, kw - 1); x < std::min(w, w + kw - 1); ++x)
              d_i[y * w + x] += k * d_o[(y + 1 - kh) * w + (x + 1 - kw)];
        }
    }
  }
}
