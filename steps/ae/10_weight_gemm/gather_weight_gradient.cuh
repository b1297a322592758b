// gradient[o][c][tap] = sum over z of partial[z][tap x in_ch + c][o] for the real channels
// (in, out), and gradient[out x in x 9 + o] = the bias sums: the reference layout, each
// element written once, the splits added in order. One thread per partial element (reads
// coalesced; the writes scatter, 1.2 MB at most).
__global__ void gather_weight_gradient(int in, int out, int in_ch, int out_ch, int splits,
                                       const float* __restrict__ partial, float* __restrict__ gradient) {
  const size_t count = size_t(9) * in_ch * out_ch + out_ch, idx = global_index();
  if (idx >= count) return;
  float total = 0;
  for (int z = 0; z < splits; ++z) total += partial[size_t(z) * count + idx];
  const int o = int(idx % out_ch), row = int(idx / out_ch);
  if (o >= out) return;
  if (row == 9 * in_ch) {
    gradient[size_t(out) * in * 9 + o] = total;
    return;
  }
  const int tap = row / in_ch, c = row % in_ch;
  if (c < in) gradient[(size_t(o) * in + c) * 9 + tap] = total;
}
