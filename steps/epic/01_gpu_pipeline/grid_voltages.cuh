__global__ void grid_voltages(Shape s, int batch, const uint8_t* __restrict__ volts, const int32_t* __restrict__ cell_x,
                              const int32_t* __restrict__ cell_y, const float* __restrict__ weight_x,
                              const float* __restrict__ weight_y, cufftComplex* grids) {
  // Thread order = byte order: (sample, channel, stand, pol), so the reads are coalesced.
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t total = size_t(batch) * s.channels * s.stands * s.pols;
  if (i >= total) return;
  const int p = int(i % s.pols);
  const int a = int(i / s.pols % s.stands);
  const int c = int(i / (size_t(s.pols) * s.stands) % s.channels);
  const size_t t = i / (size_t(s.pols) * s.stands * s.channels);
  const uint8_t b = volts[i];
  const float re = float(nibble_re(b)), im = float(nibble_im(b));
  if (re == 0.0f && im == 0.0f) return;
  const size_t plan = size_t(c) * s.stands + a;
  cufftComplex* grid = grids + ((t * s.channels + c) * s.pols + p) * size_t(s.n) * s.n;
  const int mask = s.n - 1;
  for (int iy = 0; iy < s.support; ++iy) {
    const float wy = weight_y[plan * s.support + iy];
    const int row = ((cell_y[plan] + iy) & mask) * s.n;
    for (int ix = 0; ix < s.support; ++ix) {
      const float w = wy * weight_x[plan * s.support + ix];
      cufftComplex* cell = grid + row + ((cell_x[plan] + ix) & mask);
      atomicAdd(&cell->x, w * re);  // stands of one sample may share a cell
      atomicAdd(&cell->y, w * im);
    }
  }
}
