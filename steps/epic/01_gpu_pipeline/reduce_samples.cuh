__global__ void reduce_samples(Shape s, int batch, const float* __restrict__ products, float* image) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (plane, channel, pixel)
  if (i >= size_t(s.planes) * s.channels * nn) return;
  const size_t px = i % nn;
  const int c = int(i / nn % s.channels), q = int(i / (nn * s.channels));
  float sum = 0;
  for (int t = 0; t < batch; ++t) sum += products[((size_t(t) * s.channels + c) * s.planes + q) * nn + px];
  image[i] += sum;
}
