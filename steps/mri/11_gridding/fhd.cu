// mri 11_gridding: beyond the direct sum. Every step before this one evaluates
//   F^H d(x_n) = sum_m mu_m e^{i 2 pi k_m . x_n}
// exactly, M x N terms. On a Cartesian grid of voxels it is an adjoint non-uniform FFT, which
// practitioners compute by gridding (steps/mri/recon/gridding.hpp has the CPU twin;
// common/mri/kaiser_bessel.hpp the kernel both use and its error bound):
//   1. spread: each sample adds mu_m times a Kaiser-Bessel kernel W cells wide to the W^3
//      cells around it on a grid oversampled sigma times (one thread per sample, float
//      atomics: at sigma 2 the grid of a 64^3 image is 16 MB and stays in L2),
//   2. one inverse 3D FFT of the grid (cuFFT),
//   3. deapodize: divide each voxel's bin by the kernel's transform, keep the central n^3.
// O(M W^3 + G log G) instead of O(M N): the price is an approximation, whose error falls with
// W and sigma (accuracy class `gridding`: 5e-4 relative L2 against the direct sum).
// Voxels that are not a grid (Parboil's inputs) are bad input for this step: exit 2.
#include <cufft.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cufft_check.cuh"
#include "mri/device_problem.cuh"
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

// 3. One thread per voxel: its FFT bin (j = i - n/2 mod g per axis), divided by the kernel's
// transform (tables per axis, made in double on the host).
__global__ void deapodize(const float2* grid, Grid gr, int nx, int ny, int nz, const int* bin, const float* scale,
                          float* outR, float* outI) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nx * ny * nz) return;
  const int ix = v % nx, iy = (v / nx) % ny, iz = v / (nx * ny);
  const float2 c = grid[(size_t(bin[nx + ny + iz]) * gr.g[1] + bin[nx + iy]) * gr.g[0] + bin[ix]];
  const float s = scale[ix] * scale[nx + iy] * scale[nx + ny + iz];
  outR[v] = c.x * s;
  outI[v] = c.y * s;
}

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, int width, double oversampling) : threads_(threads), width_(width), oversampling_(oversampling) {}
  ~GriddingStep() override {
    if (plan_) cufftDestroy(plan_);
  }

  void load(const Inputs& in) override {
    if (in.nx == 0)
      throw core::UsageError("gridding needs a Cartesian grid of voxels (x = (ix - nx/2)/nx, as generated problems have); "
                             "these voxels are not one");
    const int n[3] = {in.nx, in.ny, in.nz};
    gr_.width = width_;
    gr_.beta = float(kaiser_bessel_beta(width_, oversampling_));  // UsageError when W is too narrow for sigma
    for (int a = 0; a < 3; ++a) {
      gr_.g[a] = oversampled_size(n[a], oversampling_);
      gr_.sigma[a] = float(double(gr_.g[a]) / n[a]);
    }
    dev_.upload(in);
    const size_t cells = size_t(gr_.g[0]) * gr_.g[1] * gr_.g[2];
    if (grid_.size() != cells) {
      if (plan_) cufftDestroy(plan_);
      plan_ = 0;
      size_t free = 0, total = 0;
      CUDA_CHECK(cudaMemGetInfo(&free, &total));
      if (3 * cells * sizeof(float2) > free)  // the grid and cuFFT's work area (at most twice it)
        throw core::UsageError("an oversampled grid of " + std::to_string(gr_.g[0]) + "^3 cells needs " +
                               std::to_string(3 * cells * sizeof(float2) >> 20) + " MiB with the FFT; " +
                               std::to_string(free >> 20) + " MiB are free: use a smaller --oversampling");
      grid_.resize(cells);
      CUFFT_CHECK(cufftPlan3d(&plan_, gr_.g[2], gr_.g[1], gr_.g[0], CUFFT_C2C));
    }
    // Deapodization: voxel i of an axis sits at FFT bin i - n/2 (mod g); divide by the
    // kernel's transform at nu = (i - n/2) / n / sigma cycles per grid cell.
    std::vector<int> bin;
    std::vector<float> scale;
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < n[a]; ++i) {
        const int j = i - n[a] / 2;
        bin.push_back((j + gr_.g[a]) % gr_.g[a]);
        scale.push_back(float(1 / kaiser_bessel_transform(double(j) / n[a] / gr_.sigma[a], width_, gr_.beta)));
      }
    bin_.upload(bin.data(), bin.size());
    scale_.upload(scale.data(), scale.size());
    n_[0] = n[0], n_[1] = n[1], n_[2] = n[2];
  }

  void compute() override {
    float2* grid = grid_.data();
    CUDA_CHECK(cudaMemsetAsync(grid, 0, grid_.size() * sizeof(float2)));
    spread<<<blocks_for(dev_.numK, threads_), threads_>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), dev_.phiR.data(),
                                                          dev_.phiI.data(), dev_.dR.data(), dev_.dI.data(), dev_.numK,
                                                          dev_.q(), gr_, grid);
    CUDA_CHECK_LAUNCH();
    // 2. sum_q b_q e^{+i 2 pi q j / g}: cuFFT's inverse (unnormalized), z slowest.
    CUFFT_CHECK(cufftExecC2C(plan_, reinterpret_cast<cufftComplex*>(grid), reinterpret_cast<cufftComplex*>(grid), CUFFT_INVERSE));
    deapodize<<<blocks_for(dev_.numX, threads_), threads_>>>(grid, gr_, n_[0], n_[1], n_[2], bin_.data(), scale_.data(),
                                                             dev_.rFhD.data(), dev_.iFhD.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, width_;
  double oversampling_;
  Grid gr_{};
  int n_[3] = {0, 0, 0};
  DeviceProblem dev_;
  DeviceArray<float2> grid_;
  DeviceArray<int> bin_;
  DeviceArray<float> scale_;
  cufftHandle plan_ = 0;
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
