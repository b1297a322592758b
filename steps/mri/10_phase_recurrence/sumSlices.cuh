__global__ void sumSlices(const float* rPart, const float* iPart, float* rFhD, float* iFhD,
                          int slices, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  float r = 0, i = 0;
  for (int s = 0; s < slices; ++s) {
    r += rPart[size_t(s) * numX + n];
    i += iPart[size_t(s) * numX + n];
  }
  rFhD[n] = r;
  iFhD[n] = i;
}
