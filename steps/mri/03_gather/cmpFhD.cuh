__global__ void cmpFhD(const float* kx, const float* ky, const float* kz, const float* rMu,
                       const float* iMu, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n]);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhD[n] += rMu[m] * cArg - iMu[m] * sArg;
    iFhD[n] += iMu[m] * cArg + rMu[m] * sArg;
  }
}
