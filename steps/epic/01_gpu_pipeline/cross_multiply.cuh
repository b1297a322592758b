__global__ void cross_multiply(Shape s, int batch, ProductList pl, const cufftComplex* __restrict__ fields, float* products) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (sample, channel, pixel)
  if (i >= size_t(batch) * s.channels * nn) return;
  const size_t px = i % nn, tc = i / nn;
  const int jx = int(px % s.n), jy = int(px / s.n), half = s.n / 2, mask = s.n - 1;
  const size_t dst = size_t((jy + half) & mask) * s.n + ((jx + half) & mask);  // zenith to the centre
  const cufftComplex fx = fields[tc * s.pols * nn + px];
  const cufftComplex fy = s.pols > 1 ? fields[(tc * s.pols + 1) * nn + px] : fx;
  float* out = products + tc * s.planes * nn + dst;
  for (int k = 0; k < pl.count; ++k) {
    float* o = out + pl.plane[k] * nn;
    switch (Product(pl.kind[k])) {
      case Product::XX: o[0] = fx.x * fx.x + fx.y * fx.y; break;
      case Product::YY: o[0] = fy.x * fy.x + fy.y * fy.y; break;
      case Product::I: o[0] = fx.x * fx.x + fx.y * fx.y + fy.x * fy.x + fy.y * fy.y; break;
      case Product::XY:  // F_X conj(F_Y)
        o[0] = fx.x * fy.x + fx.y * fy.y;
        o[nn] = fx.y * fy.x - fx.x * fy.y;
        break;
      case Product::YX:  // F_Y conj(F_X)
        o[0] = fx.x * fy.x + fx.y * fy.y;
        o[nn] = fx.x * fy.y - fx.y * fy.x;
        break;
    }
  }
}
