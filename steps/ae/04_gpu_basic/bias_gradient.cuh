__global__ void bias_gradient(int batch, int out_ch, int pixels, const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t o = global_index();
  if (o >= size_t(out_ch)) return;
  float sum = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < pixels; ++j) sum += d_out[(size_t(b) * out_ch + o) * pixels + j];
  gradient[o] = sum;
}
