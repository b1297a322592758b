// mri 13_binned_spread: 12's gridding with the spread cuFINUFFT uses. A plan, made in load()
// from the sample positions alone (outside the timed compute(), as cuFINUFFT's plan is outside
// its execute; the step reports its time as plan_ms), sorts the samples into bins of 8^3 grid cells (a
// counting sort: count, prefix sum, place) and cuts each bin's list into subproblems of at
// most --subproblem samples. compute() gives each subproblem one block: its samples add into
// the bin's (8 + W)^3 cells in shared memory, and the block adds that subgrid to the grid
// once. 12 made 2 W^3 global float atomics per sample (803 M on large at W 5); here those
// adds hit shared memory, and the global ones fall to 2 (8 + W)^3 per subproblem. A grid
// cell's sum is now a short chain per subproblem, then one add each: --tolerance 1e-6 holds
// on large, where 12's hundreds of float atomics per cell floor the error at 6e-6.
// The kernel, its width from --tolerance, the FFT and the deapodization are 12's.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/timing.hpp"
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

// A bin is kBin^3 grid cells; a sample in bin b of an axis (cells kBin b .. kBin b + kBin - 1)
// reaches cells kBin b - W/2 .. kBin b + kBin - 1 + ceil(W/2): a subgrid of kBin + W per axis.
constexpr int kBin = 8;

struct Bins {
  int n[3];  // bins per axis: ceil(g / kBin) (the last one partial where kBin does not divide g)
};

// A sample's position in grid cells along one axis, wrapped onto the periodic grid [0, g).
__device__ float wrapped(float k, float sigma, int g) {
  float s = k * sigma;
  s -= float(g) * floorf(s / float(g));
  return s < float(g) ? s : 0.0f;  // -1e-9 wraps to g - 1e-9, which rounds to g: that is cell 0
}

// Plan, step 1: each sample's wrapped position, its bin, and its rank among its bin's samples.
__global__ void bin_samples(const float* kx, const float* ky, const float* kz, int numK, Grid gr, Bins bins,
                            float* sx, float* sy, float* sz, int* bin_of, int* rank, int* count) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  const float x = wrapped(kx[m], gr.sigma[0], gr.g[0]), y = wrapped(ky[m], gr.sigma[1], gr.g[1]),
              z = wrapped(kz[m], gr.sigma[2], gr.g[2]);
  const int b = (int(z) / kBin * bins.n[1] + int(y) / kBin) * bins.n[0] + int(x) / kBin;
  sx[m] = x, sy[m] = y, sz[m] = z;
  bin_of[m] = b;
  rank[m] = atomicAdd(&count[b], 1);
}

// Plan, step 3 (step 2, the prefix sum over the bins, is the host's): each sample's position
// and index in bin order.
__global__ void place_samples(const float* sx, const float* sy, const float* sz, const int* bin_of, const int* rank,
                              const int* bin_start, int numK, float* px, float* py, float* pz, int* order) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  const int j = bin_start[bin_of[m]] + rank[m];
  px[j] = sx[m], py[j] = sy[m], pz[j] = sz[m];
  order[j] = m;
}

// The kernel's weights along one axis for a sample at s grid cells: cells ceil(s - W/2) ..
// floor(s + W/2), returned as the first one's offset from the subgrid's origin o.
__device__ int axis_weights(float s, const Grid& gr, int o, float (&w)[kMaxWidth + 1], int& first) {
  const int lo = int(ceilf(s - 0.5f * gr.width)), hi = int(floorf(s + 0.5f * gr.width));
  int n = 0;
  for (int q = lo; q <= hi && n <= kMaxWidth; ++q, ++n) {
    const float r = 2.0f * (float(q) - s) / float(gr.width);
    w[n] = fabsf(r) <= 1.0f ? expf(gr.beta * (sqrtf(fmaxf(0.0f, 1.0f - r * r)) - 1.0f)) : 0.0f;
  }
  first = lo - o;
  return n;
}

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
  for (int j = sp.y + threadIdx.x; j < sp.y + sp.z; j += blockDim.x) {
    const int m = order[j];
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
#ifdef STEPWISE_MUTANT_DROP_HALO  // the bug, in the test suite's build only: validation must catch it
    if (c % side < gr.width / 2 || c % side >= gr.width / 2 + kBin) continue;  // x outside the bin's own cells
#endif
    const int x = (o[0] + c % side + gr.g[0]) % gr.g[0], y = (o[1] + c / side % side + gr.g[1]) % gr.g[1],
              z = (o[2] + c / (side * side) + gr.g[2]) % gr.g[2];
    float2* cell = grid + (size_t(z) * gr.g[1] + y) * gr.g[0] + x;
    atomicAdd(&cell->x, v.x);
    atomicAdd(&cell->y, v.y);
  }
}

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, double tolerance, int subproblem)
      : threads_(threads), subproblem_(subproblem), kernel_(es_kernel_for(tolerance / kMargin, kOversampling)) {}

  void load(const Inputs& in) override {
    gr_.width = kernel_.width;
    gr_.beta = float(kernel_.beta);
    grid_.prepare(in, kOversampling, [&](double nu) { return es_kernel_transform(nu, kernel_); });
    for (int a = 0; a < 3; ++a) gr_.g[a] = grid_.g(a), gr_.sigma[a] = grid_.sigma(a);
    dev_.upload(in);
    make_plan();
  }

  void compute() override {
    float2* grid = grid_.data();
    grid_.clear();
    const int side = kBin + gr_.width;
    spread_subproblems<<<int(subproblems_.size()), threads_, side * side * side * sizeof(float2)>>>(
        px_.data(), py_.data(), pz_.data(), order_.data(), dev_.phiR.data(), dev_.phiI.data(), dev_.dR.data(),
        dev_.dI.data(), dev_.q(), subproblems_.data(), gr_, bins_, grid);
    CUDA_CHECK_LAUNCH();
    grid_.transform_to_voxels(dev_.rFhD.data(), dev_.iFhD.data(), threads_);  // 2. FFT, 3. deapodize
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

  void describe(core::Fields& params) const override {
    params.set("kernel_width", kernel_.width).set("beta", kernel_.beta);
    params.set("subproblems", subproblems_.size()).set("plan_ms", plan_ms_);  // the last load()'s plan
  }

 private:
  // The plan: the samples in bin order (positions and their index m) and the subproblems.
  void make_plan() {
    CUDA_CHECK(cudaDeviceSynchronize());
    const core::HostClock clock;
    const int numK = dev_.numK;
    for (int a = 0; a < 3; ++a) bins_.n[a] = (gr_.g[a] + kBin - 1) / kBin;
    const int nbins = bins_.n[0] * bins_.n[1] * bins_.n[2];
    sx_.resize(numK), sy_.resize(numK), sz_.resize(numK), bin_of_.resize(numK), rank_.resize(numK), count_.resize(nbins);
    CUDA_CHECK(cudaMemsetAsync(count_.data(), 0, nbins * sizeof(int)));
    bin_samples<<<blocks_for(numK, threads_), threads_>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), numK, gr_, bins_,
                                                          sx_.data(), sy_.data(), sz_.data(), bin_of_.data(),
                                                          rank_.data(), count_.data());
    CUDA_CHECK_LAUNCH();
    // 2. Where each bin starts in bin order, and its subproblems: a few thousand bins, on the host.
    std::vector<int> counts(nbins), start(nbins);
    count_.download(counts.data());
    std::vector<int3> subproblems;
    for (int b = 0, first = 0; b < nbins; first += counts[b], ++b) {
      start[b] = first;
      for (int i = 0; i < counts[b]; i += subproblem_) subproblems.push_back({b, first + i, std::min(subproblem_, counts[b] - i)});
    }
    bin_start_.upload(start.data(), start.size());
    subproblems_.upload(subproblems.data(), subproblems.size());
    px_.resize(numK), py_.resize(numK), pz_.resize(numK), order_.resize(numK);
    place_samples<<<blocks_for(numK, threads_), threads_>>>(sx_.data(), sy_.data(), sz_.data(), bin_of_.data(),
                                                            rank_.data(), bin_start_.data(), numK, px_.data(), py_.data(),
                                                            pz_.data(), order_.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    plan_ms_ = clock.elapsed_ms();
  }

  int threads_, subproblem_;
  EsKernel kernel_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
  Bins bins_{};
  DeviceArray<float> px_, py_, pz_;  // sample positions in grid cells, wrapped, in bin order
  DeviceArray<int> order_;           // the sample m at each place in bin order
  DeviceArray<int3> subproblems_;    // bin, first place, samples
  DeviceArray<float> sx_, sy_, sz_;  // the plan's work: positions, bins and ranks in sample order,
  DeviceArray<int> bin_of_, rank_, count_, bin_start_;  // samples per bin and where each bin starts
  double plan_ms_ = 0;
};

}  // namespace

StepInfo step_info() {
  return {"13_binned_spread", "Gridding: samples sorted into bins, each bin spread in shared memory", true,
          Accuracy::tolerance,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"subproblem", 1024, 32, 65536, "Most samples one block spreads (a bin with more is cut into several)"},
           {"tolerance", 1e-4, 1e-6, 1e-2, "Relative L2 error allowed against the direct sum (sets the kernel width)",
            false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), core::real_tunable(t, "tolerance"),
                                        int(core::tunable(t, "subproblem")));
}

}  // namespace mri
