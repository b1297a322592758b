// gradient[o][i][kh][kw] = sum over the batch's images b and pixels (y, x) of
// d_out[b][o][y][x] in[b][i][y+kh-1][x+kw-1]: the whole minibatch's sum, by one thread.
__global__ void conv_weight_gradient(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ in,
                                     const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int kw = int(idx % 3), kh = int(idx / 3 % 3), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  float sum = 0;
  for (int b = 0; b < batch; ++b) {
    const float* d = d_out + (size_t(b) * out_ch + o) * h * w;
    const float* image = in + (size_t(b) * in_ch + i) * h * w;
    for (int y = max(0, 1 - kh); y < min(h, h + 1 - kh); ++y)
      for (int x = max(0, 1 - kw); x < min(w, w + 1 - kw); ++x) sum += d[y * w + x] * image[(y + kh - 1) * w + x + kw - 1];
  }
  gradient[idx] = sum;
}
