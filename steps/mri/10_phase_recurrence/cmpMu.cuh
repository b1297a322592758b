// 16-byte aligned, 32 bytes: two 128-bit shared loads bring a whole sample.
struct __align__(16) KSample {
  float kx, ky, kz;           // the sample's position in k-space
  float rMu, iMu;             // its weight
  float cosD, sinD, twoCosD;  // e^{i delta}, delta = 2 pi kx / nx: one voxel step along x
};

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      int nx, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  double sinD, cosD;  // in double: once per sample, and every voxel step reuses it
  sincospi(2.0 * kx[m] / nx, &sinD, &cosD);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu, float(cosD), float(sinD), float(2 * cosD)};
}
