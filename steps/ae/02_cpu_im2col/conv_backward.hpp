// Adds this image's share of the weight and bias gradients; writes the input gradient when
// d_in is given: d_in[i][y][x] gathers every output that read in[i][y][x].
// The weight gradient is d_out (out x pixels) times im2col(in) transposed, the input gradient
// the flipped weights (in x out 9) times im2col(d_out).
void conv_backward(const Conv& c, const float* flipped, const float* in, const float* d_out, float* gradient,
                   float* d_in, float* col) {
  const int h = c.height, w = c.width;
  const float* weight = flipped + c.weight;
  for (int o = 0; o < c.out; ++o) {
    const float* d_o = d_out + size_t(o) * h * w;
    float bias_sum = 0;
    for (int j = 0; j < h * w; ++j) bias_sum += d_o[j];
    gradient[c.bias + o] += bias_sum;
  }
  im2col_transposed(c.in, h, w, in, col);
  gemm(c.out, c.in * 9, h * w, d_out, h * w, col, c.in * 9, gradient + c.weight, c.in * 9);
  if (!d_in) return;
  std::fill(d_in, d_in + size_t(c.in) * h * w, 0.0f);
  im2col(c.out, h, w, d_out, col);
  gemm(c.in, h * w, c.out * 9, weight, c.out * 9, col, h * w, d_in, h * w);
}
