// 1. One block per subproblem (a bin, its first sample in bin order, how many): the samples'
// weights mu_m spread into the bin's subgrid in shared memory, then the subgrid added to the
// grid, wrapped, one float atomic per component of each cell a sample reached.
__global__ void spread_subproblems(const float* px, const float* py, const float* pz, const int* order,
                                   const float* phiR, const float* phiI, const float* dR, const float* dI, bool q,
                                   const int3* subproblems, Grid gr, Bins bins, float2* grid) {
  extern __shared__ float2 subgrid[];  // side^3 cells, x fastest
  const int side = kBin + gr.width, cells = side * side * side;
  const int3 sp = subproblems[blockIdx.x];
  const int o[3] = {sp.x % bins.n[0] * kBin - gr.width / 2, sp.x / bins.n[0] % bins.n[1] * kBin - gr.width / 2,
                    sp.x / (bins.n[0] * bins.n[1]) * kBin - gr.width / 2};
  for (int c = threadIdx.x; c < cells; c += blockDim.x) subgrid[c] = make_float2(0.0f, 0.0f);
  __syncthreads();
  const int stride = (sp.z + 31) / 32;  // samples in turn per lane: the 32 lanes are this far apart
  for (int i = threadIdx.x; i < 32 * stride; i += blockDim.x) {
    const int k = i % 32 * stride + i / 32;  // the warp's lanes are consecutive in i, stride apart in k
    if (k >= sp.z) continue;
    const int j = sp.y + k, m = order[j];
    float rMu, iMu;
    sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
    float wx[kMaxWidth + 1], wy[kMaxWidth + 1], wz[kMaxWidth + 1];
    int fx, fy, fz;
    const int nx = axis_weights(px[j], gr, o[0], wx, fx);
    const int ny = axis_weights(py[j], gr, o[1], wy, fy);
    const int nz = axis_weights(pz[j], gr, o[2], wz, fz);
    for (int iz = 0; iz < nz; ++iz)
      for (int iy = 0; iy < ny; ++iy) {
        const float wzy = wz[iz] * wy[iy];
        float2* row = subgrid + ((fz + iz) * side + fy + iy) * side + fx;
        for (int ix = 0; ix < nx; ++ix) {
          const float w = wzy * wx[ix];
          atomicAdd(&row[ix].x, w * rMu);
          atomicAdd(&row[ix].y, w * iMu);
        }
      }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cells; c += blockDim.x) {
    const float2 v = subgrid[c];
    if (v.x == 0.0f && v.y == 0.0f) continue;  // a cell no sample reached (a bin's edge)
    const int x = (o[0] + c % side + gr.g[0]) % gr.g[0], y = (o[1] + c / side % side + gr.g[1]) % gr.g[1],
              z = (o[2] + c / (side * side) + gr.g[2]) % gr.g[2];
    float2* cell = grid + (size_t(z) * gr.g[1] + y) * gr.g[0] + x;
    atomicAdd(&cell->x, v.x);
    atomicAdd(&cell->y, v.y);
  }
}
