constexpr int kMaxWidth = 8;  // cells per axis a sample reaches: at most kMaxWidth + 1
constexpr double kOversampling = 2;  // sigma: the width rule holds its tolerance here (es_kernel.hpp)
// FINUFFT's width rule (es_kernel_for) at t measured up to 1.2 t on a partial trajectory at the
// edge of k-space (`mri_gridding_accuracy --kernel es --samples 1500`): asked for t / 10, it
// gives one cell more, and the error stays under t.
constexpr double kMargin = 10;

struct Grid {
  int g[3];         // oversampled points per axis
  float sigma[3];   // g / n: the grid's own oversampling, so that voxels land on FFT bins
  int width;        // W
  float beta;       // the kernel's shape
};

// The kernel's weights along one axis for a sample at s grid cells: cells ceil(s - W/2) ..
// floor(s + W/2), wrapped onto the periodic grid.
__device__ int axis_weights(float s, const Grid& gr, int axis, float (&w)[kMaxWidth + 1], int (&cell)[kMaxWidth + 1]) {
  const int lo = int(ceilf(s - 0.5f * gr.width)), hi = int(floorf(s + 0.5f * gr.width));
  const int g = gr.g[axis];
  int n = 0;
  for (int q = lo; q <= hi && n <= kMaxWidth; ++q, ++n) {
    const float r = 2.0f * (float(q) - s) / float(gr.width);
    w[n] = fabsf(r) <= 1.0f ? expf(gr.beta * (sqrtf(fmaxf(0.0f, 1.0f - r * r)) - 1.0f)) : 0.0f;
    cell[n] = ((q % g) + g) % g;
  }
  return n;
}

// 1. One thread per sample: its weight mu_m spread over the W^3 cells around it.
__global__ void spread(const float* kx, const float* ky, const float* kz, const float* phiR, const float* phiI,
                       const float* dR, const float* dI, int numK, bool q, Grid gr, float2* grid) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  float wx[kMaxWidth + 1], wy[kMaxWidth + 1], wz[kMaxWidth + 1];
  int cx[kMaxWidth + 1], cy[kMaxWidth + 1], cz[kMaxWidth + 1];
  const int nx = axis_weights(kx[m] * gr.sigma[0], gr, 0, wx, cx);
  const int ny = axis_weights(ky[m] * gr.sigma[1], gr, 1, wy, cy);
  const int nz = axis_weights(kz[m] * gr.sigma[2], gr, 2, wz, cz);
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy) {
      const float wzy = wz[iz] * wy[iy];
      float2* row = grid + (size_t(cz[iz]) * gr.g[1] + cy[iy]) * gr.g[0];
      for (int ix = 0; ix < nx; ++ix) {
        const float w = wzy * wx[ix];
        atomicAdd(&row[cx[ix]].x, w * rMu);
        atomicAdd(&row[cx[ix]].y, w * iMu);
      }
    }
}
