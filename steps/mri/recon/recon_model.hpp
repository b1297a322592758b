// The reconstruction's own problem: what its k-space data are, the image they describe, and
// the two images made from them (least squares and gridding), consistent with one another.
//
// The ladder's problems (common/mri/problem.hpp) carry d = phi F(k): the phantom's transform
// times the voxel box's. For the ladder any d will do; for a reconstruction it is the
// transform of the phantom blurred by one voxel box, and the voxel-basis image it describes
// sits half a voxel from true_image()'s box [x_n, x_n + 1/n)^3 (steps/mri/recon/README.md).
// Here the data are what a scanner measures, the object's transform: d = F(k) G(k) + noise,
// G the transform of a Gaussian blur of `blur` voxels (0: the sharp Shepp-Logan phantom), on
// the trajectory and with the phi of the ladder's problem of that size; the true image is the
// blurred object averaged over each voxel's box [x_n, x_n + 1/n)^3, what the model
// F_mn = phi_m e^{-i 2 pi k_m . x_n} has as coefficients.
#pragma once
#include <array>
#include <cmath>
#include <string>

#include "gridding.hpp"
#include "mri/problem.hpp"
#include "recon.hpp"

namespace mri {

enum class ReconData {
  object,  // d = F(k) G(k) + noise: the object's transform (the default)
  ladder,  // the ladder's problem unchanged, d = phi F(k) + noise (as mri_recon had it before)
};

struct ReconSpec {
  std::string size = "small";
  uint64_t seed = 1;
  double noise = 0;      // complex Gaussian, standard deviation noise |F(0)| per sample
  int undersample = 1;   // every R-th spiral arm
  double blur = 0;       // Gaussian blur of the object, standard deviation in voxels (object data only)
  ReconData data = ReconData::object;
};

// The problem: generate(size, seed, ...)'s trajectory, phi and voxels; d as `data` says. The
// ladder's problem itself for ReconData::ladder (same name and digest). Object data are named
// e.g. "small-object-blur1" ("small-R2-object" for blur 0) and carry params "data" and
// "blur_voxels".
Problem recon_problem(const ReconSpec& s);

// The image the data describe on the voxel basis: the object (blurred by `blur` voxels)
// averaged over each voxel's box [x_n, x_n + 1/n)^3. blur 0 is true_image(p) (the ladder's
// data are compared with it too). blur > 0 is exact up to 1e-10 relative truncation:
//   T_n = (1/8) sum over k in (Z/2)^3 of F(k) G(k) conj(phi(k)) e^{i 2 pi k . x_n},
// the Fourier series of the blurred object on a box of side 2 (it lies inside), folded onto
// one FFT of (2n)^3.
cvec recon_true_image(const Problem& p, double blur);

// Gridding as an image of the voxel basis: the density-compensated F^H d,
// sum_m w_m conj(phi_m) d_m e^{i 2 pi k_m . x_n} (w_m = spiral_density), whose target is the
// box average of true_image(); gridding_recon() (w_m d_m, no conj(phi)) estimates the object
// at the point x_n, the corner of that box: half a voxel away on object data, a whole voxel
// on the ladder's (whose d carries phi once already).
cvec gridding_image(const Problem& p, const GriddingParams& g);

// F^H d or Q by the adjoint NUFFT (gridding_adjoint, W = 8, sigma = 2): relative error about
// 3e-8 against the direct sum (steps/mri/recon/README.md, gridding accuracy), in O(M + N log N).
cvec nufft_sums(const Problem& p, Kernel kernel);

// What a ladder step's program says of its own run, from its results record. The program runs
// once as a warm-up and once timed: step_ms is the timed run's end-to-end time (the copies to
// and from the GPU, the binning plan and the kernels; what each further image costs a process
// that keeps its cuFFT plan), first_ms the warm-up's (the same plus what a process pays once:
// the plan, the first allocations, kernels loaded on first use), device_setup_ms the program's
// CUDA context before any run. The program's start and the validation its harness does on
// every written output are in neither. The rest break the timed run down (the gridding steps
// record them; NaN where a step does not): load = upload + binning plan + the grid's
// preparation, compute = spread + fft + deapodize (CUDA events), store. NaN for the sums
// mri_recon computes itself.
struct SumTiming {
  double step_ms = NAN, kernel_ms = NAN, first_ms = NAN, device_setup_ms = NAN;
  double load_ms = NAN, upload_ms = NAN, plan_ms = NAN, prepare_ms = NAN, fft_plan_ms = NAN;
  double spread_ms = NAN, fft_ms = NAN, deapodize_ms = NAN, store_ms = NAN;
  // What the program paid once: its context and its first run's excess over the timed run.
  double one_time_ms() const { return (std::isnan(device_setup_ms) ? 0 : device_setup_ms) + first_ms - step_ms; }
};

// sum_step() with "nufft" added: cpu-double, cpu-single, nufft. A ladder step's program fills
// *timing (when given) on every call.
std::vector<std::string> recon_sum_step_names();
SumStep recon_sum_step(const std::string& name, const std::string& flag, SumTiming* timing = nullptr);

// Whether the named computation of F^H d or Q is the direct M x N sum on the CPU: the CPU
// references (cpu-double, cpu-single) and the ladder's CPU steps (00_cpu, 01_cpu_omp, the
// mri_cpu_steps of steps/mri/meson.build). Those are refused at --size large (hours); nufft
// and the GPU steps are not.
bool direct_sum_on_cpu(const std::string& name);

}  // namespace mri
