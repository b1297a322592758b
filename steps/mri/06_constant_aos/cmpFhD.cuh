__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (k_c[m].kx * xn_r + k_c[m].ky * yn_r + k_c[m].kz * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += k_c[m].rMu * cArg - k_c[m].iMu * sArg;
    iFhDn_r += k_c[m].iMu * cArg + k_c[m].rMu * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}
