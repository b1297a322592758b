// out[b][o][y][x] = bias[o] + sum over i, kh, kw of weight[o][i][kh][kw] in[b][i][y+kh-1][x+kw-1]
// (zero outside the image). Consecutive threads take consecutive x: coalesced writes.
__global__ void conv_forward(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ in,
                             const float* __restrict__ weight, const float* __restrict__ bias, float* __restrict__ out) {
  const size_t idx = global_index();
  if (idx >= size_t(batch) * out_ch * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h), o = int(idx / (size_t(w) * h) % out_ch);
  const size_t b = idx / (size_t(w) * h * out_ch);
  const float* image = in + b * in_ch * h * w;
  const float* k = weight + size_t(o) * in_ch * 9;
  float sum = bias[o];
  for (int i = 0; i < in_ch; ++i)
    for (int kh = 0; kh < 3; ++kh) {
      const int iy = y + kh - 1;
      if (iy < 0 || iy >= h) continue;
      for (int kw = 0; kw < 3; ++kw) {
        const int ix = x + kw - 1;
        if (ix < 0 || ix >= w) continue;
        sum += k[(i * 3 + kh) * 3 + kw] * image[(size_t(i) * h + iy) * w + ix];
      }
    }
  out[idx] = sum;
}
