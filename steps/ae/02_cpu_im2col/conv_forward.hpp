// out (c.out, h, w) = bias + 3x3 convolution of in (c.in, h, w) with zero padding 1.
// The convolution is the weights (out x in 9) times im2col(in).
void conv_forward(const Conv& c, const float* params, const float* in, float* out, float* col) {
  const int h = c.height, w = c.width;
  const float* weight = params + c.weight;
  for (int o = 0; o < c.out; ++o) {
    float* out_o = out + size_t(o) * h * w;
    std::fill(out_o, out_o + size_t(h) * w, params[c.bias + o]);
  }
  im2col(c.in, h, w, in, col);
  gemm(c.out, h * w, c.in * 9, weight, c.in * 9, col, h * w, out, h * w);
}
