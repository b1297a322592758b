// The kernel's weight of cell lo + n along one axis for a sample at s grid cells: the cells
// are 14's, lo = ceil(s - W/2) .. hi = floor(s + W/2), W or W + 1 of them; past hi, 0.
template <int W>
__device__ float weight(float s, int lo, int hi, int n, float beta) {
  const float r = 2.0f * (float(lo + n) - s) / float(W);
  return lo + n <= hi && fabsf(r) <= 1.0f ? expf(beta * (sqrtf(fmaxf(0.0f, 1.0f - r * r)) - 1.0f)) : 0.0f;
}

// 1. One block per subproblem (a bin, its first sample in bin order, how many): the samples'
// weights mu_m spread into the bin's subgrid in shared memory, then the subgrid added to the
// grid, wrapped, one float atomic per component of each cell a sample reached.
template <int W>
__global__ void spread_subproblems(const float* px, const float* py, const float* pz, const int* order,
                                   const float* phiR, const float* phiI, const float* dR, const float* dI, bool q,
                                   const int3* subproblems, Grid gr, Bins bins, float2* grid) {
  extern __shared__ int2 subgrid[];  // side^3 cells, x fastest, in units of 1 / scale
  __shared__ float warp_sums[32];
  __shared__ float scale;
  constexpr int side = kBin + W, cells = side * side * side;
  const int3 sp = subproblems[blockIdx.x];
  const int o[3] = {sp.x % bins.n[0] * kBin - W / 2, sp.x / bins.n[0] % bins.n[1] * kBin - W / 2,
                    sp.x / (bins.n[0] * bins.n[1]) * kBin - W / 2};
  for (int c = threadIdx.x; c < cells; c += blockDim.x) subgrid[c] = make_int2(0, 0);
  // S, the bound on every cell: each thread's samples, its warp's, the block's.
  float bound = 0.0f;
  for (int j = sp.y + threadIdx.x; j < sp.y + sp.z; j += blockDim.x) {
    const int m = order[j];
    float rMu, iMu;
    sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
    bound += fmaxf(fabsf(rMu), fabsf(iMu));
  }
  for (int offset = 16; offset > 0; offset /= 2) bound += __shfl_xor_sync(0xffffffffu, bound, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = bound;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int w = 0; w < blockDim.x / 32; ++w) sum += warp_sums[w];
    scale = sum > 0.0f ? 1073741824.0f / sum : 0.0f;  // 2^30 / S: |cell| <= 2^30 plus the roundings
  }
  __syncthreads();
  const int stride = (sp.z + 31) / 32;  // samples in turn per lane: the 32 lanes are this far apart
  for (int i = threadIdx.x; i < 32 * stride; i += blockDim.x) {
    const int k = i % 32 * stride + i / 32;  // the warp's lanes are consecutive in i, stride apart in k
    if (k >= sp.z) continue;
    const int j = sp.y + k, m = order[j];
    float rMu, iMu;
    sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
    const float x = px[j], y = py[j], z = pz[j];
    const int lx = int(ceilf(x - 0.5f * W)), ly = int(ceilf(y - 0.5f * W)), lz = int(ceilf(z - 0.5f * W));
    const int hx = int(floorf(x + 0.5f * W)), hy = int(floorf(y + 0.5f * W)), hz = int(floorf(z + 0.5f * W));
    float wx[W + 1], wy[W + 1];
#pragma unroll
    for (int n = 0; n <= W; ++n) wx[n] = weight<W>(x, lx, hx, n, gr.beta), wy[n] = weight<W>(y, ly, hy, n, gr.beta);
    // A cell of weight 0 (past hi, which can be one past the subgrid's edge) is skipped.
    for (int iz = 0; iz <= W; ++iz) {
      const float wz = weight<W>(z, lz, hz, iz, gr.beta);
      if (wz == 0.0f) continue;
#pragma unroll
      for (int iy = 0; iy <= W; ++iy) {
        if (wy[iy] == 0.0f) continue;
        const float wzy = wz * wy[iy];
        int2* row = subgrid + ((lz - o[2] + iz) * side + ly - o[1] + iy) * side + lx - o[0];
#pragma unroll
        for (int ix = 0; ix <= W; ++ix) {
          if (wx[ix] == 0.0f) continue;
          const float w = wzy * wx[ix] * scale;
          atomicAdd(&row[ix].x, __float2int_rn(w * rMu));
          atomicAdd(&row[ix].y, __float2int_rn(w * iMu));
        }
      }
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cells; c += blockDim.x) {
    const int2 v = subgrid[c];
    if (v.x == 0 && v.y == 0) continue;  // a cell no sample reached (a bin's edge)
    const int x = (o[0] + c % side + gr.g[0]) % gr.g[0], y = (o[1] + c / side % side + gr.g[1]) % gr.g[1],
              z = (o[2] + c / (side * side) + gr.g[2]) % gr.g[2];
    float2* cell = grid + (size_t(z) * gr.g[1] + y) * gr.g[0] + x;
    atomicAdd(&cell->x, float(v.x) / scale);
    atomicAdd(&cell->y, float(v.y) / scale);
  }
}
