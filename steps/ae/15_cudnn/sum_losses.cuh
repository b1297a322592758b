// ---- Our own kernels besides elementwise.cuh's: the loss's block sums added up ----

// One block: *loss = the sum of count block sums, in a fixed order (no atomics, no memset).
__global__ void sum_losses(int count, const float* __restrict__ partial, float* __restrict__ loss) {
  float* sums = shared_floats();
  float sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = sums[0];
}
