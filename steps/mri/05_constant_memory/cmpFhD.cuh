__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (kx_c[m] * xn_r + ky_c[m] * yn_r + kz_c[m] * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += rMu_c[m] * cArg - iMu_c[m] * sArg;
    iFhDn_r += iMu_c[m] * cArg + rMu_c[m] * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}
