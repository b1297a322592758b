// mri 12_es_kernel: 11's gridding with the kernel of FINUFFT and cuFINUFFT, the "exponential
// of semicircle" phi(z) = exp(beta (sqrt(1 - z^2) - 1)) (common/mri/es_kernel.hpp), and its
// width chosen from the accuracy asked for: --tolerance t gives the narrowest kernel whose
// aliasing stays under t at sigma = 2 (about one cell per decade: W = 6 at 1e-4, 7 at 1e-5),
// and validation checks the relative L2 error against t itself (accuracy class `tolerance`).
// 1e-5 is the tightest t it accepts: on large a grid cell sums hundreds of float atomic adds,
// and that rounding alone measured 6e-6.
// Each weight is an expf and a sqrtf where 11 evaluated a Bessel I0; the spread, the FFT and
// the deapodization are 11's (the kernel's transform now by quadrature, on the host).
// Voxels that are not a grid (Parboil's inputs) are bad input for this step: exit 2.
#include <cmath>

#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/es_kernel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

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

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, double tolerance) : threads_(threads), kernel_(es_kernel_for(tolerance / kMargin, kOversampling)) {}

  void load(const Inputs& in) override {
    gr_.width = kernel_.width;
    gr_.beta = float(kernel_.beta);
    grid_.prepare(in, kOversampling, [&](double nu) { return es_kernel_transform(nu, kernel_); });
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

  void describe(core::Fields& params) const override {
    params.set("kernel_width", kernel_.width).set("beta", kernel_.beta);
  }

 private:
  int threads_;
  EsKernel kernel_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
};

}  // namespace

StepInfo step_info() {
  return {"12_es_kernel", "Gridding: the exponential-of-semicircle kernel, its width from --tolerance", true,
          Accuracy::tolerance,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"tolerance", 1e-4, 1e-5, 1e-2, "Relative L2 error allowed against the direct sum (sets the kernel width)",
            false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), core::real_tunable(t, "tolerance"));
}

}  // namespace mri
