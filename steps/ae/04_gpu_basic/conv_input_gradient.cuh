// d_in[b][i][y][x] = sum over o, kh, kw of weight[o][i][kh][kw] d_out[b][o][y+1-kh][x+1-kw]:
// every output that read in[b][i][y][x], gathered by the thread that owns it.
__global__ void conv_input_gradient(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ d_out,
                                    const float* __restrict__ weight, float* __restrict__ d_in) {
  const size_t idx = global_index();
  if (idx >= size_t(batch) * in_ch * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h), i = int(idx / (size_t(w) * h) % in_ch);
  const size_t b = idx / (size_t(w) * h * in_ch);
  const float* d = d_out + b * out_ch * h * w;
  float sum = 0;
  for (int o = 0; o < out_ch; ++o)
    for (int kh = 0; kh < 3; ++kh) {
      const int oy = y + 1 - kh;
      if (oy < 0 || oy >= h) continue;
      for (int kw = 0; kw < 3; ++kw) {
        const int ox = x + 1 - kw;
        if (ox < 0 || ox >= w) continue;
        sum += weight[((size_t(o) * in_ch + i) * 3 + kh) * 3 + kw] * d[(size_t(o) * h + oy) * w + ox];
      }
    }
  d_in[idx] = sum;
}
