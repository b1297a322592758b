// A cell's value is the weighted sum of the voltages of the stands that touch it: cell_start
// (channel, cell) indexes that cell's (stand, weight) entries, in stand order.
__global__ void grid_cells(Shape s, int samples, const uint8_t* __restrict__ volts, const int32_t* __restrict__ cell_start,
                           const int32_t* __restrict__ cell_stand, const float* __restrict__ cell_weight, cufftComplex* grids) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (sample, channel, pol, cell): the grids' order
  if (i >= size_t(samples) * s.channels * s.pols * nn) return;
  const size_t cell = i % nn, tcp = i / nn;
  const int p = int(tcp % s.pols);
  const size_t tc = tcp / s.pols;  // sample * channels + channel
  const int c = int(tc % s.channels);
  const uint8_t* bytes = volts + tc * s.stands * s.pols + p;  // stand a's byte at a * pols
  const size_t list = size_t(c) * nn + cell;
  float re = 0, im = 0;
  for (int e = cell_start[list]; e < cell_start[list + 1]; ++e) {
    const uint8_t b = bytes[size_t(cell_stand[e]) * s.pols];
    re += cell_weight[e] * float(nibble_re(b));
    im += cell_weight[e] * float(nibble_im(b));
  }
  grids[i] = make_cuFloatComplex(re, im);
}
