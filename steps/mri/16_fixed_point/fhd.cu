// mri 16_fixed_point: 15's spread with the subgrid in 32-bit fixed point. Hopper has no float
// add for shared memory: 15's atomicAdd compiles to a load, an add and a compare-and-swap that
// loops until no other lane wrote between them (LDS, FADD, ATOMS.CAST.SPIN), and the profile
// of 15 shows that pipeline 94 % busy. An integer add to shared memory is one instruction
// (ATOMS.ADD). So each block first sums its samples' largest weights, S = sum_m max(|Re mu_m|,
// |Im mu_m|), which bounds every cell of its subgrid (a kernel weight is at most 1), and adds
// each contribution as the integer nearest to it times 2^30 / S: no cell can overflow, and the
// rounding, S 2^-31 per add, is far under a float sum's over the same cells. The block then
// adds each cell, scaled back to float, to the grid as before. Integer sums do not depend on
// the order of the adds: the subgrids are now the same from run to run.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/timing.hpp"
#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/es_kernel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

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
#ifdef STEPWISE_MUTANT_DROP_HALO  // the bug, in the test suite's build only: validation must catch it
    if (c % side < W / 2 || c % side >= W / 2 + kBin) continue;  // x outside the bin's own cells
#endif
    const int x = (o[0] + c % side + gr.g[0]) % gr.g[0], y = (o[1] + c / side % side + gr.g[1]) % gr.g[1],
              z = (o[2] + c / (side * side) + gr.g[2]) % gr.g[2];
    float2* cell = grid + (size_t(z) * gr.g[1] + y) * gr.g[0] + x;
    atomicAdd(&cell->x, float(v.x) / scale);
    atomicAdd(&cell->y, float(v.y) / scale);
  }
}

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, double tolerance, int subproblem)
      : threads_(threads), subproblem_(subproblem), kernel_(es_kernel_for(tolerance / kMargin, kOversampling)) {
    if (threads % 32) throw core::UsageError("--threads " + std::to_string(threads) + ": the bound is summed by whole warps; use a multiple of 32");
  }

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
    switch (gr_.width) {  // the widths --tolerance 1e-2 .. 1e-6 give
      case 4: spread<4>(grid); break;
      case 5: spread<5>(grid); break;
      case 6: spread<6>(grid); break;
      case 7: spread<7>(grid); break;
      case 8: spread<8>(grid); break;
      default: throw core::UsageError("no spread compiled for kernel width " + std::to_string(gr_.width));
    }
    grid_.transform_to_voxels(dev_.rFhD.data(), dev_.iFhD.data(), threads_);  // 2. FFT, 3. deapodize
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

  void describe(core::Fields& params) const override {
    params.set("kernel_width", kernel_.width).set("beta", kernel_.beta);
    params.set("subproblems", subproblems_.size()).set("plan_ms", plan_ms_);  // the last load()'s plan
    params.set("upload_ms", dev_.upload_ms);
    grid_.describe(params);  // the FFT's plan, the grid's preparation, compute()'s phases
  }

 private:
  template <int W>
  void spread(float2* grid) {
    const int side = kBin + W;
    spread_subproblems<W><<<int(subproblems_.size()), threads_, side * side * side * sizeof(int2)>>>(
        px_.data(), py_.data(), pz_.data(), order_.data(), dev_.phiR.data(), dev_.phiI.data(), dev_.dR.data(),
        dev_.dI.data(), dev_.q(), subproblems_.data(), gr_, bins_, grid);
    CUDA_CHECK_LAUNCH();
  }

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
  return {"16_fixed_point", "Gridding: 15's subgrid summed in 32-bit fixed point", true,
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
