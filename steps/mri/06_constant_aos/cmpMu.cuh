constexpr int kChunk = 1024;  // samples per launch: 20 B x 1024 = 20 KB of the 64 KB

struct KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
};
__constant__ KSample k_c[kChunk];

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu};
}
