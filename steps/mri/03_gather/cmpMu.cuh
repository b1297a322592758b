__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu[m], iMu[m]);
}
