constexpr int kChunk = 1024;  // samples per launch: 5 arrays x 4 B x 1024 = 20 KB of the 64 KB

__constant__ float kx_c[kChunk], ky_c[kChunk], kz_c[kChunk], rMu_c[kChunk], iMu_c[kChunk];

__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu[m], iMu[m]);
}
