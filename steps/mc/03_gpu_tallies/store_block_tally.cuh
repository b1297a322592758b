// Columns -> the block's batch row: shuffles within each warp, then a tree over the warps,
// then one fixed-point atomicAdd per shell. Row `shells` of heat holds the photon counts.
__device__ void store_block_tally(float* heat, int shells, unsigned long long* row) {
  const int threads = blockDim.x, tid = threadIdx.x, lane = tid % 32, warps = threads / 32;
  for (int s = 0; s <= shells; ++s) {  // 1. warp: lane 0's column gets the warp's sum
    float v = heat[s * threads + tid];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) heat[s * threads + tid] = v;
  }
  __syncthreads();
  int stride = 1;  // 2. block: warp w adds warp w + stride, halving until warp 0 has it all
  while (stride < warps) stride *= 2;
  for (stride /= 2; stride > 0; stride /= 2) {
    for (int i = tid; i < (shells + 1) * stride; i += threads) {
      const int s = i / stride, w = i % stride;
      if (w + stride < warps) heat[s * threads + 32 * w] += heat[s * threads + 32 * (w + stride)];
    }
    __syncthreads();
  }
  for (int s = tid; s <= shells; s += threads) atomicAdd(&row[s], to_fixed(heat[s * threads]));  // 3. one update per block
}
