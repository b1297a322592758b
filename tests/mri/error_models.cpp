// mri_error_models: the errors correct steps make, measured on the CPU by redoing each GPU
// step's float arithmetic on the voxels --check compares. The limits of common/mri/validation.cpp
// rest on these and on the recorded GPU runs (steps/mri/README.md, "Validation"); each model is
// checked there against a recorded run of its step.
//   03  03-06: the phase 2 pi (kx x + ky y + kz z) in float, sinf/cosf, one accumulate per
//       component, multiply-adds fused as nvcc fuses them
//   00  the same without fused multiply-adds (00_cpu's loop, as this CPU build runs it)
//   07  03 with __sincosf: the phase times 1/(2 pi) rounded toward zero, sin and cos of that
//       fraction of a turn (to double precision: the SFU's own error, 2^-21.4, is left out)
//   08  08 and 09: 2 pi folded into the voxel coordinates, 07's sin/cos, two accumulates per
//       component
//   10  10: 07's sin/cos at each thread's first voxel of 16, the recurrence for the others,
//       partial sums per slice of samples (the slicing an H200 gets) added at the end
// usage: mri_error_models --size tiny|small|large [--samples N] [--kernel fhd|q] [--recorded]
//   --recorded compares the 2,000 random voxels the recorded runs were checked on.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/portable.hpp"
#include "mri/problem.hpp"
#include "mri/reference.hpp"
#include "mri/validation.hpp"
#include "mri/weights.hpp"

namespace {

using Complex = std::complex<double>;

// __sincosf: one multiply by 1/(2 pi) rounded toward zero, then sin and cos of the fraction.
void sfu_sincos(float phase, float& s, float& c) {
  const double exact = double(phase) * double(0.15915494309189535f);
  float turns = float(exact);
  if (std::abs(double(turns)) > std::abs(exact)) turns = std::nextafter(turns, 0.0f);
  const double fraction = double(turns) - std::nearbyint(double(turns));
  s = float(std::sin(2 * core::kPi * fraction));
  c = float(std::cos(2 * core::kPi * fraction));
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] {
    CLI::App app{"mri_error_models: errors of the steps' float arithmetic, on the CPU", "mri_error_models"};
    std::string size = "small", kernel_name = "fhd";
    size_t samples = 0;
    bool recorded = false;
    app.add_option("--size", size, "tiny | small | large")->check(CLI::IsMember({"tiny", "small", "large"}));
    app.add_option("--samples", samples, "Keep the first N samples");
    app.add_option("--kernel", kernel_name, "fhd | q")->check(CLI::IsMember({"fhd", "q"}));
    app.add_flag("--recorded", recorded, "Compare the 2,000 random voxels the recorded runs were checked on");
    if (auto code = core::parse_command_line(app, argc, argv)) return *code;
    const mri::Kernel kernel = kernel_name == "q" ? mri::Kernel::q : mri::Kernel::fhd;
    const mri::Problem p = mri::generate(size, 1, 0.0, samples);

    std::vector<size_t> voxels = mri::reference_voxels(p, 1);
    if (recorded && voxels.size() < p.voxels()) {  // the sample before the edges were added
      voxels.resize(p.voxels());
      std::iota(voxels.begin(), voxels.end(), 0);
      std::mt19937_64 rng(1 ^ 0x9e3779b97f4a7c15ull);
      std::shuffle(voxels.begin(), voxels.end(), rng);
      voxels.resize(2000);
      std::sort(voxels.begin(), voxels.end());
    }
    const auto ref = mri::reference(p, kernel, voxels);

    const int K = int(p.samples());
    const bool q = kernel == mri::Kernel::q;
    std::vector<float> rMu(K), iMu(K);
    for (int m = 0; m < K; ++m)
      mri::sample_weight(q, p.phiR[m], p.phiI[m], q ? 0.f : p.dR[m], q ? 0.f : p.dI[m], rMu[m], iMu[m]);
    const float twoPi = 2 * core::kPiF;

    const std::vector<std::pair<const char*, std::function<Complex(size_t)>>> models = {
        {"03", [&](size_t n) {
           float re = 0, im = 0;
           for (int m = 0; m < K; ++m) {
             const float phase = twoPi * std::fma(p.kz[m], p.z[n], std::fma(p.ky[m], p.y[n], p.kx[m] * p.x[n]));
             const float c = std::cos(phase), s = std::sin(phase);
             re += std::fma(rMu[m], c, -(iMu[m] * s));
             im += std::fma(iMu[m], c, rMu[m] * s);
           }
           return Complex(re, im);
         }},
        {"00", [&](size_t n) {
           float re = 0, im = 0;
           for (int m = 0; m < K; ++m) {
             const float a = p.kx[m] * p.x[n], b = p.ky[m] * p.y[n], d = p.kz[m] * p.z[n];
             const float phase = twoPi * ((a + b) + d);
             const float c = std::cos(phase), s = std::sin(phase);
             const float t1 = rMu[m] * c, t2 = iMu[m] * s, t3 = iMu[m] * c, t4 = rMu[m] * s;
             re += t1 - t2;
             im += t3 + t4;
           }
           return Complex(re, im);
         }},
        {"07", [&](size_t n) {
           float re = 0, im = 0;
           for (int m = 0; m < K; ++m) {
             const float phase = twoPi * std::fma(p.kz[m], p.z[n], std::fma(p.ky[m], p.y[n], p.kx[m] * p.x[n]));
             float s, c;
             sfu_sincos(phase, s, c);
             re += std::fma(rMu[m], c, -(iMu[m] * s));
             im += std::fma(iMu[m], c, rMu[m] * s);
           }
           return Complex(re, im);
         }},
        {"08", [&](size_t n) {
           float re = 0, im = 0;
           const float x = twoPi * p.x[n], y = twoPi * p.y[n], z = twoPi * p.z[n];
           for (int m = 0; m < K; ++m) {
             float s, c;
             sfu_sincos(std::fma(p.kz[m], z, std::fma(p.ky[m], y, p.kx[m] * x)), s, c);
             re = std::fma(rMu[m], c, re);
             re = std::fma(-iMu[m], s, re);
             im = std::fma(iMu[m], c, im);
             im = std::fma(rMu[m], s, im);
           }
           return Complex(re, im);
         }},
        {"10", [&](size_t n) {
           const int nx = p.grid[0];
           if (nx == 0) return Complex(NAN, NAN);
           // 16 voxels and 128 threads per block, 132 SMs with 16 blocks each: 10's slicing.
           const int per_thread = 16, threads = 128, rows = int(p.voxels()) / nx;
           const int blocks = ((nx + per_thread - 1) / per_thread * rows + threads - 1) / threads;
           const int wanted = std::max(1, (16 * 132 + blocks - 1) / blocks), tiles = (K + threads - 1) / threads;
           const int per_slice = (tiles + std::min(wanted, tiles) - 1) / std::min(wanted, tiles) * threads;
           const int ix = int(n % nx), j = ix % per_thread;
           const size_t n0 = n - j;
           const float x0 = twoPi * p.x[n0], y0 = twoPi * p.y[n0], z0 = twoPi * p.z[n0];
           float R = 0, I = 0;
           for (int first = 0; first < K; first += per_slice) {
             float re = 0, im = 0;
             for (int m = first; m < std::min(K, first + per_slice); ++m) {
               float s, c;
               sfu_sincos(std::fma(p.kz[m], z0, std::fma(p.ky[m], y0, p.kx[m] * x0)), s, c);
               float wR = std::fma(rMu[m], c, -(iMu[m] * s)), wI = std::fma(iMu[m], c, rMu[m] * s);
               if (j > 0) {
                 const double delta = core::kPi * 2.0 * p.kx[m] / nx;
                 const float cosD = float(std::cos(delta)), sinD = float(std::sin(delta)), twoCosD = float(2 * std::cos(delta));
                 float vR = std::fma(wR, cosD, -(wI * sinD)), vI = std::fma(wR, sinD, wI * cosD);
                 for (int step = 2; step <= j; ++step) {
                   const float uR = std::fma(twoCosD, vR, -wR), uI = std::fma(twoCosD, vI, -wI);
                   wR = vR; wI = vI; vR = uR; vI = uI;
                 }
                 wR = vR; wI = vI;
               }
               re += wR;
               im += wI;
             }
             R += re;
             I += im;
           }
           return Complex(R, I);
         }},
    };
    printf("%s, %s, %zu voxels compared%s\n", p.name.c_str(), kernel_name.c_str(), voxels.size(),
           recorded ? " (the recorded runs' sample)" : "");
    for (const auto& [name, model] : models) {
      std::vector<Complex> out(voxels.size());
#pragma omp parallel for schedule(dynamic, 4)
      for (size_t i = 0; i < voxels.size(); ++i) {
        const Complex v = model(voxels[i]);
        out[i] = {float(v.real()), float(v.imag())};  // what the step stores
      }
      const auto e = core::compare(ref, out);
      const double kspace = mri::kspace_residual(p, voxels, ref, out);
      printf("  %s  rel_l2 %.4g  k-space residual %.4g\n", name, e.rel_l2, kspace);
      fflush(stdout);
    }
    return 0;
  });
}
