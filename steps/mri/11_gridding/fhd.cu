// mri 11_gridding: beyond the direct sum. Every step before this one evaluates
//   F^H d(x_n) = sum_m mu_m e^{i 2 pi k_m . x_n}
// exactly, M x N terms. On a Cartesian grid of voxels it is an adjoint non-uniform FFT, which
// practitioners compute by gridding (steps/mri/recon/gridding.hpp has the CPU twin;
// common/mri/kaiser_bessel.hpp the kernel both use and its error bound):
//   1. spread: each sample adds mu_m times a Kaiser-Bessel kernel W cells wide to the W^3
//      cells around it on a grid oversampled sigma times (one thread per sample, float
//      atomics: at sigma 2 the grid of a 64^3 image is 16 MB and stays in L2),
//   2. one inverse 3D FFT of the grid (cuFFT),
//   3. deapodize: divide each voxel's bin by the kernel's transform, keep the central n^3
//      (2. and 3., which every later gridding step repeats: common/mri/oversampled_grid.cuh).
// O(M W^3 + G log G) instead of O(M N): the price is an approximation, whose error falls with
// W and sigma (accuracy class `gridding`: 5e-4 relative L2 against the direct sum).
// Voxels that are not a grid (Parboil's inputs) are bad input for this step: exit 2.
#include <cmath>

#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/kaiser_bessel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

constexpr int kMaxWidth = 8;  // cells per axis a sample reaches: at most kMaxWidth + 1

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
    w[n] = fabsf(r) <= 1.0f ? cyl_bessel_i0f(gr.beta * sqrtf(fmaxf(0.0f, 1.0f - r * r))) : 0.0f;
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

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, int width, double oversampling) : threads_(threads), width_(width), oversampling_(oversampling) {}

  void load(const Inputs& in) override {
    gr_.width = width_;
    gr_.beta = float(kaiser_bessel_beta(width_, oversampling_));  // UsageError when W is too narrow for sigma
    grid_.prepare(in, oversampling_, [&](double nu) { return kaiser_bessel_transform(nu, width_, gr_.beta); });
    for (int a = 0; a < 3; ++a) gr_.g[a] = grid_.g(a), gr_.sigma[a] = grid_.sigma(a);
    dev_.upload(in);
  }

  void compute() override {
    float2* grid = grid_.data();
    grid_.clear();
    spread<<<blocks_for(dev_.numK, threads_), threads_>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), dev_.phiR.data(),
                                                          dev_.phiI.data(), dev_.dR.data(), dev_.dI.data(), dev_.numK,
                                                          dev_.q(), gr_, grid);
    CUDA_CHECK_LAUNCH();
    grid_.transform_to_voxels(dev_.rFhD.data(), dev_.iFhD.data(), threads_);  // 2. FFT, 3. deapodize
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, width_;
  double oversampling_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
};

}  // namespace

StepInfo step_info() {
  return {"11_gridding", "Gridding: Kaiser-Bessel spreading onto an oversampled grid, cuFFT, deapodization", true,
          Accuracy::gridding,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"kernel-width", 4, 2, kMaxWidth, "Kaiser-Bessel kernel width W in grid cells"},
           {"oversampling", 2.0, 1.25, 3.0, "Grid oversampling sigma", false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "kernel-width")),
                                        core::real_tunable(t, "oversampling"));
}

}  // namespace mri
