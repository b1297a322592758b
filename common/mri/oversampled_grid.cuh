// The oversampled grid of the gridding steps (11 on), and what happens to it after the spread:
//   2. one inverse 3D FFT of the grid (cuFFT),
//   3. deapodize: each voxel reads its FFT bin and divides it by the kernel's transform,
//      keeping the central n^3.
// 11 introduced both; every later gridding step changes only the kernel and the spread (1.),
// so they live here once. A step's kernel enters as its transform: deapodization divides by
// it, tabulated per axis in double on the host.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/cufft_check.cuh"
#include "core/device_array.cuh"
#include "core/error.hpp"
#include "core/fields.hpp"
#include "core/timing.hpp"
#include "mri/kaiser_bessel.hpp"  // oversampled_size
#include "mri/step.hpp"

namespace mri {

// 3. One thread per voxel: its FFT bin (j = i - n/2 mod g per axis), times 1 / the kernel's
// transform (the per-axis tables `bin` and `scale`: x's n[0] entries, then y's, then z's).
__global__ void deapodize_voxels(const float2* grid, int gx, int gy, int nx, int ny, int nz, const int* bin,
                                 const float* scale, float* outR, float* outI) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nx * ny * nz) return;
  const int ix = v % nx, iy = (v / nx) % ny, iz = v / (nx * ny);
  const float2 c = grid[(size_t(bin[nx + ny + iz]) * gy + bin[nx + iy]) * gx + bin[ix]];
  const float s = scale[ix] * scale[nx + iy] * scale[nx + ny + iz];
  outR[v] = c.x * s;
  outI[v] = c.y * s;
}

class OversampledGrid {
 public:
  OversampledGrid() = default;
  OversampledGrid(const OversampledGrid&) = delete;
  OversampledGrid& operator=(const OversampledGrid&) = delete;
  ~OversampledGrid() {
    if (plan_) cufftDestroy(plan_);
  }

  // For the voxels' grid of `in` at oversampling sigma: g = oversampled_size(n, sigma) cells
  // per axis, the grid allocated and its FFT planned (again only when g changes), and the
  // deapodization tables from transform(nu), the kernel's Fourier transform at nu cycles per
  // grid cell. Voxels that are not a grid (Parboil's inputs) are bad input (UsageError).
  template <class Transform>
  void prepare(const Inputs& in, double oversampling, Transform transform) {
    const core::HostClock clock;
    if (in.nx == 0)
      throw core::UsageError("gridding needs a Cartesian grid of voxels (x = (ix - nx/2)/nx, as generated problems have); "
                             "these voxels are not one");
    n_[0] = in.nx, n_[1] = in.ny, n_[2] = in.nz;
    for (int a = 0; a < 3; ++a) {
      g_[a] = oversampled_size(n_[a], oversampling);
      sigma_[a] = float(double(g_[a]) / n_[a]);  // the grid's own oversampling: voxels land on FFT bins
    }
    const size_t cells = size_t(g_[0]) * g_[1] * g_[2];
    if (grid_.size() != cells) {
      if (plan_) cufftDestroy(plan_);
      plan_ = 0;
      size_t free = 0, total = 0;
      CUDA_CHECK(cudaMemGetInfo(&free, &total));
      if (3 * cells * sizeof(float2) > free)  // the grid and cuFFT's work area (at most twice it)
        throw core::UsageError("an oversampled grid of " + std::to_string(g_[0]) + "^3 cells needs " +
                               std::to_string(3 * cells * sizeof(float2) >> 20) + " MiB with the FFT; " +
                               std::to_string(free >> 20) + " MiB are free");
      grid_.resize(cells);
      // Made once per grid size and kept: a process that transforms many times pays it once.
      const core::HostClock plan_clock;
      CUFFT_CHECK(cufftPlan3d(&plan_, g_[2], g_[1], g_[0], CUFFT_C2C));
      fft_plan_ms_ = plan_clock.elapsed_ms();
    }
    // Voxel i of an axis sits at FFT bin i - n/2 (mod g); divide by the kernel's transform at
    // nu = (i - n/2) / n / sigma cycles per grid cell.
    std::vector<int> bin;
    std::vector<float> scale;
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < n_[a]; ++i) {
        const int j = i - n_[a] / 2;
        bin.push_back((j + g_[a]) % g_[a]);
        scale.push_back(float(1 / transform(double(j) / n_[a] / sigma_[a])));
      }
    bin_.upload(bin.data(), bin.size());
    scale_.upload(scale.data(), scale.size());
    prepare_ms_ = clock.elapsed_ms();
  }

  int g(int axis) const { return g_[axis]; }
  float sigma(int axis) const { return sigma_[axis]; }
  float2* data() { return grid_.data(); }

  // Every cell to zero, before a spread. It opens the run's "spread" phase, which
  // transform_to_voxels() closes: the record's breakdown of compute() (describe()).
  void clear() {
    phases_.reset();
    phases_.begin("spread");
    CUDA_CHECK(cudaMemsetAsync(grid_.data(), 0, grid_.size() * sizeof(float2)));
  }

  // 2. and 3.: sum_q b_q e^{+i 2 pi q j / g}, cuFFT's inverse (unnormalized), z slowest, in
  // place; then each voxel's bin deapodized into outR/outI, `threads` voxels a block.
  void transform_to_voxels(float* outR, float* outI, int threads) {
    float2* grid = grid_.data();
    phases_.end();  // the spread
    phases_.begin("fft");
    CUFFT_CHECK(cufftExecC2C(plan_, reinterpret_cast<cufftComplex*>(grid), reinterpret_cast<cufftComplex*>(grid), CUFFT_INVERSE));
    phases_.end();
    phases_.begin("deapodize");
    const int voxels = n_[0] * n_[1] * n_[2];
    deapodize_voxels<<<(voxels + threads - 1) / threads, threads>>>(grid, g_[0], g_[1], n_[0], n_[1], n_[2], bin_.data(),
                                                                    scale_.data(), outR, outI);
    CUDA_CHECK_LAUNCH();
    phases_.end();
  }

  // Where the time of load() and compute() went, for the record: the cuFFT plan (made by the
  // first prepare() only), the last prepare() in all (the plan when made, the grid's
  // allocation, the deapodization tables), and the last run's phases by CUDA events.
  void describe(core::Fields& params) const {
    params.set("fft_plan_ms", fft_plan_ms_).set("prepare_ms", prepare_ms_);
    core::Fields phases = params.object("phase_ms");
    for (const auto& [name, ms] : phases_.totals()) phases.set(name, ms);
  }

 private:
  int n_[3] = {0, 0, 0}, g_[3] = {0, 0, 0};
  float sigma_[3] = {0, 0, 0};
  core::DeviceArray<float2> grid_;
  core::DeviceArray<int> bin_;
  core::DeviceArray<float> scale_;
  cufftHandle plan_ = 0;
  double fft_plan_ms_ = 0, prepare_ms_ = 0;
  mutable core::PhaseTimer phases_;  // totals() waits for the events: not a change of state
};

}  // namespace mri
