#include "mri/validation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/portable.hpp"
#include "mri/reference.hpp"

namespace mri {

const char* accuracy_name(Accuracy a) {
  return a == Accuracy::exact ? "exact" : a == Accuracy::fast ? "fast" : a == Accuracy::gridding ? "gridding" : "tolerance";
}

namespace {

// Limits per problem and accuracy class: rel_l2 for both kernels, the k-space residual per
// kernel (Q's error peaks at k = 0 for the fast steps, F^H d's does not). Each is about three
// times the largest error of a correct step of that class on that problem, over both kernels
// (five times on tiny, where no GPU step was measured): the table in steps/mri/README.md,
// "Validation", gives each error, its step and where it was measured.
struct Row {
  const char* problem;
  size_t voxels, samples;
  double rel_l2[2];     // [exact, fast]
  double kspace[2][2];  // [exact, fast][fhd, q]
};
constexpr Row kRows[] = {
    {"tiny", 512, 1024, {3e-6, 4e-6}, {{1e-6, 1e-6}, {1e-6, 1e-6}}},
    {"small", 32768, 32768, {1.5e-5, 2.5e-5}, {{1.5e-6, 1.5e-6}, {1.5e-6, 1.5e-5}}},
    {"large-first65536", 262144, 65536, {1.5e-5, 4e-5}, {{1.5e-6, 1.5e-6}, {3.5e-6, 3.5e-6}}},
    {"large", 262144, 3211264, {3.6e-4, 3.6e-4}, {{2.5e-5, 1.2e-5}, {5e-5, 5e-5}}},
};
// Inputs of any other shape (folders, Parboil files, other --samples prefixes): no errors
// were measured on them, so they get the limits every class had before they were measured
// per problem, and a k-space residual no larger than the rel_l2 limit (a plane wave's rel_l2).
constexpr Row kUnmeasured = {"unmeasured", 0, 0, {3e-4, 5e-4}, {{3e-4, 3e-4}, {5e-4, 5e-4}}};
constexpr double kGriddingLimit = 5e-4;

}  // namespace

Limits limits_for(const Problem& p, Kernel kernel, Accuracy accuracy, double tolerance) {
  const Row* row = &kUnmeasured;
  for (const Row& r : kRows)
    if (r.voxels == p.voxels() && r.samples == p.samples()) row = &r;
  // Gridding is an approximation whose error its kernel width and oversampling set, on every
  // problem alike: the accuracy practitioners ask of it (5e-4 relative L2 against the direct
  // sum), and a k-space residual no larger (as for the unmeasured shapes).
  if (accuracy == Accuracy::gridding) return {row->problem, kGriddingLimit, kGriddingLimit};
  // The tolerance class: the error the step was asked for, checked as asked.
  if (accuracy == Accuracy::tolerance) {
    if (!(tolerance > 0)) throw std::logic_error("limits_for: the tolerance class needs the step's tolerance");
    return {row->problem, tolerance, tolerance};
  }
  const int a = accuracy == Accuracy::exact ? 0 : 1, k = kernel == Kernel::fhd ? 0 : 1;
  return {row->problem, row->rel_l2[a], row->kspace[a][k]};
}

double kspace_residual(const Problem& p, const std::vector<size_t>& voxels,
                       const std::vector<std::complex<double>>& ref,
                       const std::vector<std::complex<double>>& test, size_t* peak) {
  const size_t V = voxels.size(), M = p.samples();
  if (V == 0 || M == 0) return 0;
  std::vector<double> errR(V), errI(V);
  double ref2 = 0;
  for (size_t i = 0; i < V; ++i) {
    errR[i] = test[i].real() - ref[i].real();
    errI[i] = test[i].imag() - ref[i].imag();
    ref2 += std::norm(ref[i]);
  }
  const double rms = std::sqrt(ref2 / double(V));
  // e^{-i 2 pi k.x} = e^{-i 2 pi kx x} e^{-i 2 pi ky y} e^{-i 2 pi kz z}: per sample, one
  // factor per distinct coordinate value of each axis (64 of them on a 64^3 grid), not one
  // sin/cos per voxel; the coordinates are the voxels' own floats.
  struct Axis {
    std::vector<double> values;  // distinct coordinates
    std::vector<size_t> index;   // per compared voxel
  };
  const auto axis_of = [&](const std::vector<float>& c) {
    Axis a;
    for (size_t n : voxels) a.values.push_back(c[n]);
    std::sort(a.values.begin(), a.values.end());
    a.values.erase(std::unique(a.values.begin(), a.values.end()), a.values.end());
    for (size_t n : voxels) a.index.push_back(std::lower_bound(a.values.begin(), a.values.end(), double(c[n])) - a.values.begin());
    return a;
  };
  const Axis ax = axis_of(p.x), ay = axis_of(p.y), az = axis_of(p.z);
  std::vector<double> residual(M);
#pragma omp parallel
  {
    // Real arithmetic throughout: std::complex products carry NaN/Inf recovery that costs
    // more than the product itself.
    std::vector<double> cx(ax.values.size()), sx(ax.values.size()), cy(ay.values.size()), sy(ay.values.size()),
        cz(az.values.size()), sz(az.values.size());
    const auto factors = [](const Axis& a, double k, std::vector<double>& c, std::vector<double>& s) {
      for (size_t j = 0; j < a.values.size(); ++j) {
        const double phase = -2 * core::kPi * k * a.values[j];
        c[j] = std::cos(phase);
        s[j] = std::sin(phase);
      }
    };
#pragma omp for schedule(static)
    for (size_t m = 0; m < M; ++m) {
      factors(ax, p.kx[m], cx, sx);
      factors(ay, p.ky[m], cy, sy);
      factors(az, p.kz[m], cz, sz);
      double re = 0, im = 0;
      for (size_t i = 0; i < V; ++i) {
        const size_t jx = ax.index[i], jy = ay.index[i], jz = az.index[i];
        const double xyR = cx[jx] * cy[jy] - sx[jx] * sy[jy], xyI = cx[jx] * sy[jy] + sx[jx] * cy[jy];
        const double eR = xyR * cz[jz] - xyI * sz[jz], eI = xyR * sz[jz] + xyI * cz[jz];
        re += errR[i] * eR - errI[i] * eI;
        im += errR[i] * eI + errI[i] * eR;
      }
      residual[m] = std::hypot(re, im) / double(V);
    }
  }
  const size_t best = std::max_element(residual.begin(), residual.end()) - residual.begin();
  if (peak) *peak = best;
  return rms > 0 ? residual[best] / rms : (residual[best] > 0 ? INFINITY : 0.0);
}

Expected expected(const Problem& p, Kernel kernel, uint64_t seed) {
  Expected e;
  e.voxels = reference_voxels(p, seed);
  e.values = reference(p, kernel, e.voxels);
  return e;
}

Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const Expected& ref,
                 const float* outR, const float* outI, double tolerance) {
  const size_t V = ref.voxels.size();
  std::vector<std::complex<double>> test(V);
  for (size_t i = 0; i < V; ++i) test[i] = {outR[ref.voxels[i]], outI[ref.voxels[i]]};
  Verdict v;
  v.reference = "cpu-double";
  v.metrics = core::compare(ref.values, test);
  const Limits limits = limits_for(p, kernel, accuracy, tolerance);
  v.limits = limits.problem;
  v.threshold = limits.rel_l2;
  v.kspace_limit = limits.kspace;
  if (v.metrics.finite) v.kspace = kspace_residual(p, ref.voxels, ref.values, test, &v.kspace_sample);
  v.pass = v.metrics.finite && v.metrics.rel_l2 <= v.threshold && v.kspace <= v.kspace_limit;
  return v;
}

Verdict validate(const Problem& p, Kernel kernel, Accuracy accuracy, const float* outR,
                 const float* outI, uint64_t seed, double tolerance) {
  return validate(p, kernel, accuracy, expected(p, kernel, seed), outR, outI, tolerance);
}

Verdict validate_parboil(const ParboilOutput& ref, const float* outR, const float* outI) {
  const size_t N = ref.re.size();
  double peak = 0;
  for (size_t i = 0; i < N; ++i) peak = std::max({peak, double(std::abs(ref.re[i])), double(std::abs(ref.im[i]))});
  Verdict v;
  v.reference = "parboil";
  v.threshold = 1e-4 * peak;
  std::vector<std::complex<double>> r(N), t(N);
  for (size_t i = 0; i < N; ++i) {
    r[i] = {ref.re[i], ref.im[i]};
    t[i] = {outR[i], outI[i]};
    for (int c = 0; c < 2; ++c) {
      const double want = c ? ref.im[i] : ref.re[i], got = c ? outI[i] : outR[i];
      const double diff = std::abs(got - want);
      const bool ok = diff <= v.threshold || (want != 0 && diff / std::abs(want) < 2e-3);
      if (!ok || !std::isfinite(got)) ++v.failures;
    }
  }
  v.metrics = core::compare(r, t);
  v.pass = v.failures == 0 && v.metrics.finite;
  return v;
}

}  // namespace mri
