// 16-byte aligned, 32 bytes: one 128-bit shared load brings kx, ky, kz, rMu.
struct __align__(16) KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
  float unused[3];   // the padding, named so that cmpMu writes it (zeros): the tile copy reads it
};

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu};
}
