// The least-squares reconstruction of Stone et al. (2008): solve
//   (F^H F + lambda W^H W) rho = F^H d
// by conjugate gradient, F^H F applied as a convolution with Q on the 2x oversampled grid of
// voxel differences (Toeplitz embedding: one FFT pair per product, FFTW on the CPU), W the
// finite differences along x, y and z (forward, no wrap).
#pragma once
#include <array>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "mri/problem.hpp"
#include "cg_result.hpp"

namespace mri {

// A computation of F^H d or Q at every voxel of a problem, chosen by name (--fhd-step,
// --q-step): "cpu-double" the reference (double, libm), "cpu-single" the float loop of the
// CPU steps (OpenMP over voxels, float sin/cos).
using SumStep = std::function<cvec(const Problem&, Kernel)>;
std::vector<std::string> sum_step_names();
// UsageError naming `flag` and listing the known names for an unknown one.
SumStep sum_step(const std::string& name, const std::string& flag);
cvec cpu_single_sums(const Problem& p, Kernel kernel);

// F^H F on the n grid (n = nx, ny, nz) from Q of toeplitz_problem(): q2n holds (2n)^3 values,
// voxel (jz * 2ny + jy) * 2nx + jx at difference ((jx - nx)/nx, ...).
class Toeplitz {
 public:
  Toeplitz(std::array<int, 3> n, const cvec& q2n);
  ~Toeplitz();
  Toeplitz(const Toeplitz&) = delete;
  Toeplitz& operator=(const Toeplitz&) = delete;
  void apply(const cvec& rho, cvec& out) const;  // out = F^H F rho
  size_t voxels() const { return size_t(n_[0]) * n_[1] * n_[2]; }
  std::array<int, 3> grid() const { return n_; }

 private:
  std::array<int, 3> n_;
  size_t cells_;
  cvec kernel_hat_;       // FFT of the circulant's first column, divided by (2n)^3
  void* buffer_;          // fftw_complex[(2n)^3]
  void *forward_, *backward_;  // fftw_plan
};

// out = W^H W rho: sum over axes of D^T D, D the forward difference inside the grid.
void regularizer(std::array<int, 3> n, const cvec& rho, cvec& out);

// CG from rho = 0; each_iteration(i, relative residual) after every iteration.
CgResult conjugate_gradient(const Toeplitz& fhf, double lambda, const cvec& b, int iterations,
                            const std::function<void(int, double)>& each_iteration = {});

// The true image on the voxel basis: the phantom averaged over each voxel's box
// [x_n, x_n + 1/n)^3 (sub^3 points per voxel), which is what d = phi F(k) models.
cvec true_image(const Problem& p, int sub = 4);
// The sharp phantom averaged over the voxel's box shifted by `offset` voxels along every axis,
// [x_n + offset/n, x_n + (offset + 1)/n)^3, sub^3 points per voxel. offset 0 is true_image().
cvec shifted_box_image(const Problem& p, double offset, int sub = 4);

}  // namespace mri
