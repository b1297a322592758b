// One thread, kVoxels voxels: every sample read from the constant bank (ULDC) feeds kVoxels
// phases, so the constant loads and the loop's own instructions per pair shrink by kVoxels.
// A block covers kVoxels * blockDim.x consecutive voxels; a thread's voxels are blockDim.x
// apart, so every global load and store of a warp stays one coalesced row.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int first = blockIdx.x * blockDim.x * kVoxels + threadIdx.x;
  float xn_r[kVoxels], yn_r[kVoxels], zn_r[kVoxels], rFhDn_r[kVoxels], iFhDn_r[kVoxels];
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = min(first + v * int(blockDim.x), numX - 1);  // past the end: computed, not stored
    xn_r[v] = 2 * core::kPiF * x[n]; yn_r[v] = 2 * core::kPiF * y[n]; zn_r[v] = 2 * core::kPiF * z[n];
    rFhDn_r[v] = rFhD[n]; iFhDn_r[v] = iFhD[n];
  }
#pragma unroll kUnroll
  for (int m = 0; m < numK; ++m) {
#pragma unroll
    for (int v = 0; v < kVoxels; ++v) {
      const float expFhD = k_c[m].kx * xn_r[v] + k_c[m].ky * yn_r[v] + k_c[m].kz * zn_r[v];
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      rFhDn_r[v] += k_c[m].rMu * cArg;
      rFhDn_r[v] -= k_c[m].iMu * sArg;
      iFhDn_r[v] += k_c[m].iMu * cArg;
      iFhDn_r[v] += k_c[m].rMu * sArg;
    }
  }
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = first + v * blockDim.x;
    if (n < numX) {
      rFhD[n] = rFhDn_r[v];
      iFhD[n] = iFhDn_r[v];
    }
  }
}
