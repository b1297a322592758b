// Plan, step 3 (step 2, the prefix sum over the bins, is the host's): each sample's position
// and index in bin order.
__global__ void place_samples(const float* sx, const float* sy, const float* sz, const int* bin_of, const int* rank,
                              const int* bin_start, int numK, float* px, float* py, float* pz, int* order) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  const int j = bin_start[bin_of[m]] + rank[m];
  px[j] = sx[m], py[j] = sy[m], pz[j] = sz[m];
  order[j] = m;
}
