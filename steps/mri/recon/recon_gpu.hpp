// The least-squares solver of recon.hpp on the GPU: the same conjugate gradient on
//   (F^H F + lambda W^H W) rho = F^H d,
// with every vector and the Toeplitz kernel kept in device memory. F^H F rho is one cuFFT
// forward and one inverse transform of the (2n)^3 grid (complex double, Z2Z, plans made once),
// W^H W is a kernel, and CG's dot products are a fixed-shape two-pass reduction, so a run
// gives the same bits every time. Only the scalars of CG (two per iteration) come back to the
// host, which prints and records the residual.
//
// Host-only header: recon_gpu.cu implements it with CUDA; a build without CUDA links
// recon_gpu_none.cpp, whose functions throw NoGpuError (exit 77).
#pragma once
#include <array>
#include <functional>
#include <memory>

#include "cg_result.hpp"  // not recon.hpp: no problem, no JSON in the nvcc compile

namespace mri {

// Whether this program was built with the GPU solver (CUDA and cuFFT).
bool gpu_solver_built();

class GpuNormalOperator;
// conjugate_gradient() on the GPU, from rho = 0: b goes up, rho comes down; each_iteration(i,
// relative residual) after every iteration, as on the CPU. The operator is built by the caller,
// so the time of its construction (Q's upload and transform, the plans) can be counted with the
// solver's.
CgResult conjugate_gradient_gpu(const GpuNormalOperator& a, const cvec& b, int iterations,
                                const std::function<void(int, double)>& each_iteration = {});

// A = F^H F + lambda W^H W on the device, from Q of toeplitz_problem() on the (2n)^3 grid.
// Made in two parts, because they are paid at different rates: the grid's part (the cuFFT Z2Z
// plan of the (2n)^3 grid and the device arrays) once per process and grid size, and the
// trajectory's part, set_kernel(Q) (Q's upload, its shift into the circulant's first column and
// its transform), once per trajectory. The three-argument constructor does both. apply() is A
// on host vectors (uploads, one product, download): what the tests compare with the CPU's
// Toeplitz and regularizer().
class GpuNormalOperator {
 public:
  // Where set-up time went, host clock after synchronization: the plan and arrays (the
  // constructor), Q's upload from pageable memory, Q's circulant and transform.
  struct SetupTiming {
    double plan_ms = 0, upload_ms = 0, transform_ms = 0;
  };
  GpuNormalOperator(std::array<int, 3> n, double lambda);
  GpuNormalOperator(std::array<int, 3> n, const cvec& q2n, double lambda);
  ~GpuNormalOperator();
  GpuNormalOperator(const GpuNormalOperator&) = delete;
  GpuNormalOperator& operator=(const GpuNormalOperator&) = delete;
  // Q of toeplitz_problem(), (2n)^3 values: replaces the kernel of the products.
  void set_kernel(const cvec& q2n);
  void apply(const cvec& rho, cvec& out) const;
  size_t voxels() const { return size_t(n_[0]) * n_[1] * n_[2]; }
  std::array<int, 3> grid() const { return n_; }
  double lambda() const { return lambda_; }
  const SetupTiming& setup_timing() const { return timing_; }

 private:
  friend CgResult conjugate_gradient_gpu(const GpuNormalOperator&, const cvec&, int, const std::function<void(int, double)>&);
  struct Device;  // the device arrays, the plan and the products (recon_gpu.cu)
  std::array<int, 3> n_;
  double lambda_;
  bool has_kernel_ = false;
  SetupTiming timing_;
  std::unique_ptr<Device> device_;
};

}  // namespace mri
