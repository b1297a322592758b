// One thread: kVoxels consecutive voxels along x of one row (row = iz * ny + iy), over the
// samples of slice blockIdx.y. Its partial sums go to slice blockIdx.y of rPart/iPart.
template <int kVoxels>
__global__ void cmpFhDRecurrence(const KSample* k, const float* x, const float* y, const float* z,
                                 float* rPart, float* iPart, int numK, int samplesPerSlice,
                                 int nx, int rows) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int segments = (nx + kVoxels - 1) / kVoxels;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the last row still help load the tiles (the barriers need every thread).
  const bool owner = t < segments * rows;
  const int row = owner ? t / segments : 0;
  const int ix0 = owner ? (t % segments) * kVoxels : 0;
  const int n0 = row * nx + ix0;
  const float x0_r = 2 * core::kPiF * x[n0], yn_r = 2 * core::kPiF * y[n0], zn_r = 2 * core::kPiF * z[n0];
  float rFhD[kVoxels] = {}, iFhD[kVoxels] = {};
  const int begin = blockIdx.y * samplesPerSlice, end = min(numK, begin + samplesPerSlice);
  for (int first = begin; first < end; first += blockDim.x) {
    const int count = min(int(blockDim.x), end - first);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[first + threadIdx.x];
    __syncthreads();
#pragma unroll(kVoxels >= 16 ? 1 : 2)
    for (int m = 0; m < count; ++m) {
      const float expFhD = k_s[m].kx * x0_r + k_s[m].ky * yn_r + k_s[m].kz * zn_r;
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      // w_0 = mu e^{i phase(x_0)}: this sample's only sin/cos in this thread.
      float wR = k_s[m].rMu * cArg - k_s[m].iMu * sArg;
      float wI = k_s[m].iMu * cArg + k_s[m].rMu * sArg;
      rFhD[0] += wR;
      iFhD[0] += wI;
      if constexpr (kVoxels > 1) {
        // w_1 = w_0 e^{i delta}: one complex rotation.
        float vR = wR * k_s[m].cosD - wI * k_s[m].sinD;
        float vI = wR * k_s[m].sinD + wI * k_s[m].cosD;
        rFhD[1] += vR;
        iFhD[1] += vI;
        // w_{j+1} = e^{i delta} w_j = 2 cos(delta) w_j - w_{j-1}, since e^{i delta} + e^{-i delta} = 2 cos(delta).
#pragma unroll
        for (int j = 2; j < kVoxels; ++j) {
          const float uR = k_s[m].twoCosD * vR - wR, uI = k_s[m].twoCosD * vI - wI;
          wR = vR;
          wI = vI;
          vR = uR;
          vI = uI;
          rFhD[j] += vR;
          iFhD[j] += vI;
        }
      }
    }
  }
  if (!owner) return;
  const size_t slice = size_t(blockIdx.y) * rows * nx;
#pragma unroll
  for (int j = 0; j < kVoxels; ++j)
    if (ix0 + j < nx) {
      rPart[slice + n0 + j] = rFhD[j];
      iPart[slice + n0 + j] = iFhD[j];
    }
}
