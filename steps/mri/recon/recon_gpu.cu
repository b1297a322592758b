// The least-squares solver on the GPU (recon_gpu.hpp): CG with F^H F by Toeplitz embedding
// and cuFFT, everything in device memory, complex double throughout.
//
// Why double: the CPU solver it replaces is double (FFTW), and CG's residual must be able to
// fall far below the float rounding of the sums (the tests compare the two solvers' images to
// 1e-9). The work is memory-bound either way (a few hundred MB per iteration on the 128^3 grid
// of the paper's scale, well under a millisecond), so float would buy at most 2x on a part of
// the time that is already small against Q and F^H d.
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>

#include "core/cuda_check.cuh"
#include "core/cufft_check.cuh"
#include "core/device_array.cuh"
#include "core/timing.hpp"
#include "recon_gpu.hpp"

namespace mri {
namespace {

constexpr int kThreads = 256;
// The dot products' first pass has a fixed shape (kDotBlocks x kThreads, grid-stride), and the
// second adds its kDotBlocks partial sums in a fixed order: the same bits on every run.
constexpr int kDotBlocks = 256;

unsigned blocks_for(size_t count) { return unsigned((count + kThreads - 1) / kThreads); }

__device__ double2 cmul(double2 a, double2 b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }

struct Dims {
  int n[3];  // the image grid
  int L[3];  // the embedding grid, 2n
};

// The circulant's first column from Q on the 2x grid: Q's point j holds the difference j - n,
// which goes to index (j - n) mod 2n = (j + n) mod 2n (a shift by half the grid on every axis).
__global__ void circulant_column(const double2* __restrict__ q, double2* __restrict__ column, Dims d) {
  const size_t cells = size_t(d.L[0]) * d.L[1] * d.L[2];
  for (size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x; c < cells; c += size_t(gridDim.x) * blockDim.x) {
    const int jx = int(c % d.L[0]), jy = int((c / d.L[0]) % d.L[1]), jz = int(c / (size_t(d.L[0]) * d.L[1]));
    const size_t to = (size_t((jz + d.n[2]) % d.L[2]) * d.L[1] + (jy + d.n[1]) % d.L[1]) * d.L[0] + (jx + d.n[0]) % d.L[0];
    column[to] = q[c];
  }
}

__global__ void scale(double2* __restrict__ v, size_t count, double s) {
  for (size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x; c < count; c += size_t(gridDim.x) * blockDim.x)
    v[c] = {v[c].x * s, v[c].y * s};
}

// rho into the corner of the (2n)^3 grid, zeros elsewhere: every cell written, no memset.
__global__ void embed(const double2* __restrict__ rho, double2* __restrict__ grid, Dims d) {
  const size_t cells = size_t(d.L[0]) * d.L[1] * d.L[2];
  for (size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x; c < cells; c += size_t(gridDim.x) * blockDim.x) {
    const int ix = int(c % d.L[0]), iy = int((c / d.L[0]) % d.L[1]), iz = int(c / (size_t(d.L[0]) * d.L[1]));
    const bool inside = ix < d.n[0] && iy < d.n[1] && iz < d.n[2];
    grid[c] = inside ? rho[(size_t(iz) * d.n[1] + iy) * d.n[0] + ix] : double2{0.0, 0.0};
  }
}

// The convolution theorem's product: the grid's transform times the kernel's (already / (2n)^3).
__global__ void multiply(double2* __restrict__ grid, const double2* __restrict__ kernel_hat, size_t cells) {
  for (size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x; c < cells; c += size_t(gridDim.x) * blockDim.x)
    grid[c] = cmul(grid[c], kernel_hat[c]);
}

// out = the corner of the grid (F^H F p) + lambda W^H W p, W the forward differences inside
// the grid: the same terms in the same order as regularizer() and conjugate_gradient() on the CPU.
__global__ void crop_regularize(const double2* __restrict__ grid, const double2* __restrict__ p, double2* __restrict__ out,
                                Dims d, double lambda) {
  const size_t voxels = size_t(d.n[0]) * d.n[1] * d.n[2];
  const size_t stride[3] = {1, size_t(d.n[0]), size_t(d.n[0]) * d.n[1]};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < voxels; i += size_t(gridDim.x) * blockDim.x) {
    const int at[3] = {int(i % d.n[0]), int((i / d.n[0]) % d.n[1]), int(i / stride[2])};
    double2 v = grid[(size_t(at[2]) * d.L[1] + at[1]) * d.L[0] + at[0]];
    if (lambda > 0) {
      const double2 pi = p[i];
      double2 w{0.0, 0.0};
      for (int a = 0; a < 3; ++a) {
        if (at[a] + 1 < d.n[a]) { w.x += pi.x - p[i + stride[a]].x; w.y += pi.y - p[i + stride[a]].y; }
        if (at[a] > 0) { w.x += pi.x - p[i - stride[a]].x; w.y += pi.y - p[i - stride[a]].y; }
      }
      v.x += lambda * w.x;
      v.y += lambda * w.y;
    }
    out[i] = v;
  }
}

// Re <a, b>, first pass: one partial sum per block (a fixed shape, so a fixed order).
__global__ void dot_partials(const double2* __restrict__ a, const double2* __restrict__ b, size_t count, double* __restrict__ partials) {
  __shared__ double sum[kThreads];
  double s = 0;
  for (size_t i = blockIdx.x * size_t(kThreads) + threadIdx.x; i < count; i += size_t(gridDim.x) * kThreads)
    s += a[i].x * b[i].x + a[i].y * b[i].y;
  sum[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sum[threadIdx.x] += sum[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sum[0];
}

// Second pass: the kDotBlocks partial sums, one block, the same tree.
__global__ void dot_total(const double* __restrict__ partials, double* __restrict__ total) {
  static_assert(kDotBlocks == kThreads, "one thread per partial sum");
  __shared__ double sum[kThreads];
  sum[threadIdx.x] = partials[threadIdx.x];
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sum[threadIdx.x] += sum[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = sum[0];
}

// rho += alpha p, r -= alpha A p.
__global__ void step_solution(double2* __restrict__ rho, double2* __restrict__ r, const double2* __restrict__ p,
                              const double2* __restrict__ ap, size_t count, double alpha) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    rho[i].x += alpha * p[i].x; rho[i].y += alpha * p[i].y;
    r[i].x -= alpha * ap[i].x; r[i].y -= alpha * ap[i].y;
  }
}

// p = r + beta p.
__global__ void next_direction(double2* __restrict__ p, const double2* __restrict__ r, size_t count, double beta) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    p[i] = {r[i].x + beta * p[i].x, r[i].y + beta * p[i].y};
}

const double2* as_device_complex(const cvec& v) { return reinterpret_cast<const double2*>(v.data()); }
double2* as_device_complex(cvec& v) { return reinterpret_cast<double2*>(v.data()); }

}  // namespace

struct GpuNormalOperator::Device {
  Dims d{};
  size_t cells = 0, voxels = 0;
  core::DeviceArray<double2> kernel_hat, grid;  // (2n)^3 each
  core::DeviceArray<double> partials, total;
  cufftHandle plan = 0;  // one Z2Z plan of the (2n)^3 grid, both directions

  ~Device() {
    if (plan) cufftDestroy(plan);
  }

  // out = A p on device vectors of `voxels` values.
  void apply(const double2* p, double2* out, double lambda) {
    embed<<<blocks_for(cells), kThreads>>>(p, grid.data(), d);
    CUDA_CHECK_LAUNCH();
    CUFFT_CHECK(cufftExecZ2Z(plan, reinterpret_cast<cufftDoubleComplex*>(grid.data()),
                             reinterpret_cast<cufftDoubleComplex*>(grid.data()), CUFFT_FORWARD));
    multiply<<<blocks_for(cells), kThreads>>>(grid.data(), kernel_hat.data(), cells);
    CUDA_CHECK_LAUNCH();
    CUFFT_CHECK(cufftExecZ2Z(plan, reinterpret_cast<cufftDoubleComplex*>(grid.data()),
                             reinterpret_cast<cufftDoubleComplex*>(grid.data()), CUFFT_INVERSE));
    crop_regularize<<<blocks_for(voxels), kThreads>>>(grid.data(), p, out, d, lambda);
    CUDA_CHECK_LAUNCH();
  }

  // Re <a, b> on the host: two kernels and one 8-byte download (which waits for them).
  double dot_re(const double2* a, const double2* b) {
    dot_partials<<<kDotBlocks, kThreads>>>(a, b, voxels, partials.data());
    CUDA_CHECK_LAUNCH();
    dot_total<<<1, kThreads>>>(partials.data(), total.data());
    CUDA_CHECK_LAUNCH();
    double v = 0;
    total.download(&v);
    return v;
  }
};

bool gpu_solver_built() { return true; }

GpuNormalOperator::GpuNormalOperator(std::array<int, 3> n, double lambda)
    : n_(n), lambda_(lambda), device_(std::make_unique<Device>()) {
  Device& g = *device_;
  for (int a = 0; a < 3; ++a) {
    g.d.n[a] = n[a];
    g.d.L[a] = 2 * n[a];
  }
  g.voxels = size_t(n[0]) * n[1] * n[2];
  g.cells = size_t(g.d.L[0]) * g.d.L[1] * g.d.L[2];
  const core::HostClock clock;
  g.partials.resize(kDotBlocks);
  g.total.resize(1);
  g.grid.resize(g.cells);
  g.kernel_hat.resize(g.cells);
  CUFFT_CHECK(cufftPlan3d(&g.plan, g.d.L[2], g.d.L[1], g.d.L[0], CUFFT_Z2Z));
  CUDA_CHECK(cudaDeviceSynchronize());
  timing_.plan_ms = clock.elapsed_ms();
}

GpuNormalOperator::GpuNormalOperator(std::array<int, 3> n, const cvec& q2n, double lambda) : GpuNormalOperator(n, lambda) {
  set_kernel(q2n);
}

void GpuNormalOperator::set_kernel(const cvec& q2n) {
  Device& g = *device_;
  if (q2n.size() != g.cells) throw std::logic_error("GpuNormalOperator: Q must hold (2n)^3 values");
  // Q goes up into `grid` (free until the first product), is shifted into the circulant's first
  // column in kernel_hat, transformed there and divided by (2n)^3 once, as on the CPU.
  core::HostClock clock;
  g.grid.upload(as_device_complex(q2n), g.cells);
  timing_.upload_ms = clock.elapsed_ms();
  clock = core::HostClock();
  circulant_column<<<blocks_for(g.cells), kThreads>>>(g.grid.data(), g.kernel_hat.data(), g.d);
  CUDA_CHECK_LAUNCH();
  CUFFT_CHECK(cufftExecZ2Z(g.plan, reinterpret_cast<cufftDoubleComplex*>(g.kernel_hat.data()),
                           reinterpret_cast<cufftDoubleComplex*>(g.kernel_hat.data()), CUFFT_FORWARD));
  scale<<<blocks_for(g.cells), kThreads>>>(g.kernel_hat.data(), g.cells, 1.0 / double(g.cells));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  timing_.transform_ms = clock.elapsed_ms();
  has_kernel_ = true;
}

GpuNormalOperator::~GpuNormalOperator() = default;

void GpuNormalOperator::apply(const cvec& rho, cvec& out) const {
  if (rho.size() != voxels()) throw std::logic_error("GpuNormalOperator::apply: rho must hold n^3 values");
  if (!has_kernel_) throw std::logic_error("GpuNormalOperator::apply: no kernel yet (set_kernel)");
  core::DeviceArray<double2> p, ap;
  p.upload(as_device_complex(rho), rho.size());
  ap.resize(rho.size());
  device_->apply(p.data(), ap.data(), lambda_);
  out.resize(rho.size());
  ap.download(as_device_complex(out));
}

CgResult conjugate_gradient_gpu(const GpuNormalOperator& a, const cvec& b, int iterations,
                                const std::function<void(int, double)>& each_iteration) {
  GpuNormalOperator::Device& g = *a.device_;
  if (b.size() != g.voxels) throw std::logic_error("conjugate_gradient_gpu: b must hold n^3 values");
  if (!a.has_kernel_) throw std::logic_error("conjugate_gradient_gpu: the operator has no kernel yet (set_kernel)");
  core::DeviceArray<double2> rho, r, p, ap;
  r.upload(as_device_complex(b), b.size());
  p.resize(b.size());
  CUDA_CHECK(cudaMemcpy(p.data(), r.data(), b.size() * sizeof(double2), cudaMemcpyDeviceToDevice));
  rho.resize(b.size());
  CUDA_CHECK(cudaMemset(rho.data(), 0, b.size() * sizeof(double2)));
  ap.resize(b.size());
  const unsigned blocks = blocks_for(b.size());

  CgResult out;
  const double bb = g.dot_re(r.data(), r.data());
  double rr = bb;
  for (int it = 1; it <= iterations; ++it) {
    if (rr == 0) {  // exact solution already (b = 0 or converged to the last bit)
      out.residuals.push_back(0);
      if (each_iteration) each_iteration(it, 0);
      continue;
    }
    g.apply(p.data(), ap.data(), a.lambda());
    const double alpha = rr / g.dot_re(p.data(), ap.data());
    step_solution<<<blocks, kThreads>>>(rho.data(), r.data(), p.data(), ap.data(), b.size(), alpha);
    CUDA_CHECK_LAUNCH();
    const double rr_next = g.dot_re(r.data(), r.data());
    next_direction<<<blocks, kThreads>>>(p.data(), r.data(), b.size(), rr_next / rr);
    CUDA_CHECK_LAUNCH();
    rr = rr_next;
    const double rel = bb > 0 ? std::sqrt(rr / bb) : 0;
    out.residuals.push_back(rel);
    if (each_iteration) each_iteration(it, rel);
  }
  out.rho.resize(b.size());
  rho.download(as_device_complex(out.rho));
  return out;
}

}  // namespace mri
