__global__ void cmpFhD(const float* kx, const float* ky, const float* kz, const float* phiR,
                       const float* phiI, const float* dR, const float* dI, const float* x,
                       const float* y, const float* z, float* rFhD, float* iFhD, int numK,
                       int numX, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  for (int n = 0; n < numX; ++n) {
    const float expFhD = 2 * core::kPiF * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n]);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    // All 32 lanes of a warp hit the same voxel at the same time: the updates serialize.
    atomicAdd(&rFhD[n], rMu * cArg - iMu * sArg);
    atomicAdd(&iFhD[n], iMu * cArg + rMu * sArg);
  }
}
