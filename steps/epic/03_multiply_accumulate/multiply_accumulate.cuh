__global__ void multiply_accumulate(Shape s, int samples, ProductList pl, bool assign, const cufftComplex* __restrict__ fields,
                                    float* image) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (channel, pixel)
  if (i >= size_t(s.channels) * nn) return;
  const size_t px = i % nn;
  const int c = int(i / nn);
  const int jx = int(px % s.n), jy = int(px / s.n), half = s.n / 2, mask = s.n - 1;
  const size_t dst = size_t((jy + half) & mask) * s.n + ((jx + half) & mask);  // zenith to the centre
  float acc[7] = {0, 0, 0, 0, 0, 0, 0};  // at most 7 planes: XX, YY, XY* (2), YX* (2), I
  for (int t = 0; t < samples; ++t) {
    const size_t tc = size_t(t) * s.channels + c;
    const cufftComplex fx = fields[tc * s.pols * nn + px];
    const cufftComplex fy = s.pols > 1 ? fields[(tc * s.pols + 1) * nn + px] : fx;
    for (int k = 0; k < pl.count; ++k) {
      float* o = acc + pl.plane[k];
      switch (Product(pl.kind[k])) {
        case Product::XX: o[0] += fx.x * fx.x + fx.y * fx.y; break;
        case Product::YY: o[0] += fy.x * fy.x + fy.y * fy.y; break;
        case Product::I: o[0] += fx.x * fx.x + fx.y * fx.y + fy.x * fy.x + fy.y * fy.y; break;
        case Product::XY:  // F_X conj(F_Y)
          o[0] += fx.x * fy.x + fx.y * fy.y;
          o[1] += fx.y * fy.x - fx.x * fy.y;
          break;
        case Product::YX:  // F_Y conj(F_X)
          o[0] += fx.x * fy.x + fx.y * fy.y;
          o[1] += fx.x * fy.y - fx.y * fy.x;
          break;
      }
    }
  }
  for (int q = 0; q < s.planes; ++q) {
    float& v = image[(size_t(q) * s.channels + c) * nn + dst];
    v = assign ? acc[q] : v + acc[q];
  }
}
