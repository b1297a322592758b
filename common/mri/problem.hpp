// The MRI problem: non-Cartesian k-space samples (kx, ky, kz), the voxel basis transform
// phi, the measured data d, and the voxel positions where F^H d and Q are evaluated:
//   F^H d_n = sum_m conj(phi_m) d_m e^{i 2 pi k_m . x_n}      Q_n = sum_m |phi_m|^2 e^{i 2 pi k_m . x_n}
// Arrays are structures of arrays in float, as the kernels read them.
#pragma once
#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mri/kernel.hpp"

namespace mri {

struct Problem {
  std::string name;        // tiny | small | large | folder name | Parboil file name
  nlohmann::json params;   // how it was made (sizes, trajectory, seed, noise)
  std::vector<float> kx, ky, kz;    // cycles per field of view
  std::vector<float> phiR, phiI;    // transform of the voxel basis function at k
  std::vector<float> dR, dI;        // k-space data (empty for Parboil mri-q inputs)
  std::vector<float> x, y, z;       // voxel positions (field-of-view units)
  std::array<int, 3> grid{0, 0, 0}; // find_grid(x, y, z): nx, ny, nz, or zeros

  size_t samples() const { return kx.size(); }
  size_t voxels() const { return x.size(); }
  bool has_data() const { return !dR.empty(); }
  std::string digest() const;  // FNV-1a over every array: names the exact input
};

// Built-in problems, generated deterministically from --seed:
//   tiny  8^3 voxels,  1,024 samples   (tests)
//   small 32^3 voxels, 32,768 samples  (the ladder; the CPU baseline runs in under a minute)
//   large 64^3 voxels, 3,211,264 samples (the published scale of Stone et al.)
// Stack of spirals through the Shepp-Logan phantom's analytic transform, plus complex
// Gaussian noise of standard deviation `noise` (relative to |d| at k = 0).
// max_samples > 0 keeps only the first max_samples samples (the same values as the full
// problem's first ones; the name becomes e.g. "large-first65536").
// undersample R > 1 keeps every R-th spiral arm of each plane (arms 0, R, 2R, ...): the arms
// lie R cycles/FOV apart, R times the Nyquist spacing, as an accelerated scan acquires them
// (the name gets "-R<R>"; the samples kept have the values of the full problem's).
// The noise of a problem of this seed: two normals per sample, as sample_noise(seed, M)[m]
// (its own stream, so that adding noise leaves the trajectory unchanged). generate() and the
// reconstruction's object data draw it here, so one seed carries the same noise in both.
std::vector<std::complex<double>> sample_noise(uint64_t seed, size_t samples);

Problem generate(const std::string& size, uint64_t seed, double noise, size_t max_samples = 0,
                 int undersample = 1);

// The problem whose Q is the Toeplitz kernel of F^H F on the n^3 grid of `p`: F^H F rho is
// the convolution of rho with Q(x_n - x_n'), differences x = (j - n)/n, j in [0, 2n), the 2x
// oversampled grid. It is written as the standard (2n)^3 grid x' = (j - n)/(2n) with every k
// doubled (k'.x' = k.x exactly in float), so every step, find_grid included, sees a grid.
// Throws UsageError when `p`'s voxels are not a grid.
Problem toeplitz_problem(const Problem& p);

// Problem folders: meta.json + kx.npy ky.npy kz.npy (float32 [M]), phi.npy and d.npy
// (complex64 [M]), x.npy y.npy z.npy (float32 [N]). Everything is checked on reading.
Problem load_folder(const std::string& dir);
void save_folder(const Problem& p, const std::string& dir);

// Parboil mri-q files (datasets/README.md): little-endian int32 numK, int32 numX,
// float32 kx, ky, kz, x, y, z, phiR, phiI. Output: uint32 numX, float32 Qr, Qi.
Problem load_parboil(const std::string& path);
void save_parboil(const Problem& p, const std::string& path);
struct ParboilOutput {
  std::vector<float> re, im;
};
ParboilOutput load_parboil_output(const std::string& path, size_t expected_voxels);

// The Cartesian grid the voxels form, found from the coordinates alone (every reader and the
// generator call it, so any input format that holds a grid is seen as one): nx, ny, nz when
// voxel (iz * ny + iy) * nx + ix sits at x = (ix - nx/2)/nx, y = (iy - ny/2)/ny,
// z = (iz - nz/2)/nz (integer halves) within float rounding; {0, 0, 0} otherwise.
std::array<int, 3> find_grid(const std::vector<float>& x, const std::vector<float>& y,
                             const std::vector<float>& z);

// Sizes above which a step refuses to start: absurd inputs get exit 2, not a crash.
constexpr size_t kMaxSamples = size_t(1) << 28;
constexpr size_t kMaxVoxels = size_t(1) << 26;

}  // namespace mri
