// out (c.out, h, w) = bias + 3x3 convolution of in (c.in, h, w) with zero padding 1.
void conv_forward(const Conv& c, const float* params, const float* in, float* out) {
  const int h = c.height, w = c.width;
  const float* weight = params + c.weight;
  for (int o = 0; o < c.out; ++o) {
    float* out_o = out + size_t(o) * h * w;
    std::fill(out_o, out_o + size_t(h) * w, params[c.bias + o]);
    for (int i = 0; i < c.in; ++i) {
      const float* in_i = in + size_t(i) * h * w;
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          const float k = weight[((size_t(o) * c.in + i) * 3 + kh) * 3 + kw];
          // Only the outputs whose tap (kh, kw) lands inside the image: the padding is zero.
          for (int y = std::max(0, 1 - kh); y < std::min(h, h + 1 - kh); ++y)
            for (int x = std::max(0, 1 - kw); x < std::min(w, w + 1 - kw); ++x)
              out_o[y * w + x] += k * in_i[(y + kh - 1) * w + (x + kw - 1)];
        }
    }
  }
}
