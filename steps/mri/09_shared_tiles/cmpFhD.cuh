// One thread, kVoxels voxels: every sample read from the shared tile (LDS) feeds kVoxels
// phases, so the shared loads and the loop's own instructions per pair shrink by kVoxels.
// A block covers kVoxels * blockDim.x consecutive voxels; a thread's voxels are blockDim.x
// apart, so every global load and store of a warp stays one coalesced row.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const KSample* k, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int first = blockIdx.x * blockDim.x * kVoxels + threadIdx.x;
  float xn_r[kVoxels], yn_r[kVoxels], zn_r[kVoxels], rFhDn_r[kVoxels], iFhDn_r[kVoxels];
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = min(first + v * int(blockDim.x), numX - 1);  // past the end: computed, not stored
    xn_r[v] = 2 * core::kPiF * x[n]; yn_r[v] = 2 * core::kPiF * y[n]; zn_r[v] = 2 * core::kPiF * z[n];
    rFhDn_r[v] = 0; iFhDn_r[v] = 0;
  }
  // Threads past the last voxel still copy their share of every tile: the barriers need them.
  for (int tile = 0; tile < numK; tile += blockDim.x) {
    const int count = min(int(blockDim.x), numK - tile);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[tile + threadIdx.x];
    __syncthreads();
#pragma unroll kUnroll
    for (int m = 0; m < count; ++m) {
#pragma unroll
      for (int v = 0; v < kVoxels; ++v) {
        const float expFhD = k_s[m].kx * xn_r[v] + k_s[m].ky * yn_r[v] + k_s[m].kz * zn_r[v];
        float sArg, cArg;
        __sincosf(expFhD, &sArg, &cArg);
        rFhDn_r[v] += k_s[m].rMu * cArg;
        rFhDn_r[v] -= k_s[m].iMu * sArg;
        iFhDn_r[v] += k_s[m].iMu * cArg;
        iFhDn_r[v] += k_s[m].rMu * sArg;
      }
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
