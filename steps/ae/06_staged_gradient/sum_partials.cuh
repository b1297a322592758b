// total[j] = sum over s of partial[s][j], j < count: blockDim (32, kSplitLanes); threadIdx.x
// runs along j (coalesced), threadIdx.y over the splits, whose sums meet in shared memory.
// Every element is written: the gradient needs no zeroing before the step.
__global__ void sum_partials(size_t count, int splits, const float* __restrict__ partial, float* __restrict__ total) {
  float* lanes = shared_floats();  // [kSplitLanes][32]
  const size_t j = size_t(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0;
  if (j < count)
    for (int s = threadIdx.y; s < splits; s += kSplitLanes) sum += partial[size_t(s) * count + j];
  lanes[threadIdx.y * 32 + threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < count) {
    float t = 0;
    for (int l = 0; l < kSplitLanes; ++l) t += lanes[l * 32 + threadIdx.x];
    total[j] = t;
  }
}
