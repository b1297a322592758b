// losses[*step] = the sum of conv5's block partials (in a fixed order), then the step counter
// moves on: nothing after the loss in a training step reads it. One block of kLossThreads.
constexpr int kLossThreads = 256;
__global__ void record_loss(int blocks, const float* __restrict__ partial, float* __restrict__ losses,
                            long long* __restrict__ step) {
  __shared__ float sums[kLossThreads];
  float s = 0;
  for (int i = threadIdx.x; i < blocks; i += kLossThreads) s += partial[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    losses[*step] = sums[0];
    *step += 1;
  }
}
