#include "epic/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "epic/rng.hpp"

namespace epic {

double rel_l2_threshold(Accuracy a) {
  // fp32: FFTW/cuFFT in single precision and float accumulation over the gulp; the errors
  // measured with 00_cpu are ~1e-6 (steps/epic/README.md). half: the EPIC memo reports < 1 %
  // mean and ~2.3 % largest error for half-precision fields with float accumulation.
  return a == Accuracy::fp32 ? 1e-4 : 2e-2;
}

const char* accuracy_name(Accuracy a) { return a == Accuracy::fp32 ? "fp32" : "half"; }

std::vector<int> validation_channels(int channels, uint64_t seed) {
  std::vector<int> out;
  if (channels <= kMaxValidatedChannels) {
    for (int c = 0; c < channels; ++c) out.push_back(c);
    return out;
  }
  out = {0, channels - 1};
  Rng rng(seed, Stream::channel, ~uint64_t(0));  // a stream no channel of the simulator uses
  while (int(out.size()) < kSampledChannels) {
    const int c = 1 + int(rng.bits() % uint64_t(channels - 2));
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double power_threshold(Accuracy a) {
  // In units of the autocorrelation power, measured with tests/epic/power_errors.cpp over tiny,
  // small and large, two gulps, the delta, prolate 2 (with and without autos), Kaiser-Bessel 3
  // and prolate 3 without autos (steps/epic/README.md, "Validation"): the fp32 steps measured
  // (00, 01, 04, 07, 10; 02, 03, 05, 06 and 08 not yet) err by at most 2.9e-7, the half steps (09, 11) by
  // 2.2e-4 to 2.9e-4 in every case, a systematic loss of power from their half-precision
  // transforms, not noise. The two closest of large's 132 channels differ by 9.4e-4 (over 2,000
  // samples; 1 / sqrt(samples) as they grow), a channel's two gulps by at least 1.4e-3. fp32: 34 times its largest error, 94 times under
  // that separation; half: 1.7 times its largest error and 1.9 times under it.
  return a == Accuracy::fp32 ? 1e-5 : 5e-4;
}

PowerCheck check_power(const Problem& p, Accuracy accuracy, const float* image) {
  PowerCheck pc;
  pc.threshold = power_threshold(accuracy);
  const ZeroLag z = zero_lag(p);
  const int n = p.imaging.image_size, C = p.obs.channels, Q = z.planes;
  const size_t nn = size_t(n) * n;
  // The reference's own grid correction, divided out pixel by pixel: the sum is then the
  // uncorrected image's, which Parseval ties to the grid.
  const std::vector<double> g = reference_correction(p.imaging.kernel, p.imaging.support, n);
  std::vector<double> inverse(nn);
  for (int m = 0; m < n; ++m)
    for (int l = 0; l < n; ++l) inverse[size_t(m) * n + l] = 1 / (g[size_t(m)] * g[size_t(l)]);
  pc.error.assign(size_t(Q) * C, 0.0);
  std::vector<double> sums(size_t(Q) * C, 0.0);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < Q * C; ++k) {
    const float* plane = image + size_t(k) * nn;  // (plane, channel) in the image's order
    double s = 0;
    for (size_t i = 0; i < nn; ++i) s += double(plane[i]) * inverse[i];
    sums[size_t(k)] = s;
    const double diff = std::abs(s - z.sum[size_t(k)]), scale = z.scale[size_t(k)];
    pc.error[size_t(k)] = !std::isfinite(s) ? HUGE_VAL : scale > 0 ? diff / scale : (diff > 0 ? HUGE_VAL : 0.0);
  }
  for (int k = 0; k < Q * C; ++k) {
    const double e = pc.error[size_t(k)];
    if (!(e <= pc.threshold)) ++pc.failing;
    if (k == 0 || !(e <= pc.worst)) {
      pc.worst = e;
      pc.worst_plane = k / C;
      pc.worst_channel = k % C;
      pc.step_sum = sums[size_t(k)];
      pc.reference_sum = z.sum[size_t(k)];
      pc.scale = z.scale[size_t(k)];
    }
  }
  pc.pass = pc.failing == 0;
  return pc;
}

std::vector<double> total_intensity(const Problem& p, const float* image, std::string* why) {
  const int n = p.imaging.image_size, C = p.obs.channels;
  const size_t nn = size_t(n) * n;
  // Which planes make the total intensity.
  std::vector<int> use;
  int plane = 0, xx = -1, yy = -1, stokes_i = -1;
  for (Product pr : p.imaging.products) {
    if (pr == Product::XX) xx = plane;
    if (pr == Product::YY) yy = plane;
    if (pr == Product::I) stokes_i = plane;
    plane += is_complex(pr) ? 2 : 1;
  }
  if (stokes_i >= 0) use = {stokes_i};
  else if (xx >= 0 && yy >= 0) use = {xx, yy};
  else if (xx >= 0) use = {xx};
  else if (yy >= 0) use = {yy};
  else {
    if (why) *why = "no total-intensity product (XX, YY or I)";
    return {};
  }
  std::vector<double> total(nn, 0.0);
  for (int q : use)
    for (int c = 0; c < C; ++c)
      for (size_t i = 0; i < nn; ++i) total[i] += image[(size_t(q) * C + c) * nn + i];
  return total;
}

std::vector<SkyMark> sky_marks(const Problem& p) {
  std::vector<SkyMark> marks;
  if (!p.has_sky) return marks;
  const int n = p.imaging.image_size;
  const double scale = n * p.imaging.grid_spacing;  // pixels per unit of l
  for (const Source& s : p.sky.sources) {
    const long jl = std::lround(s.l * scale), jm = std::lround(s.m * scale);
    if (std::abs(jl) >= n / 2 || std::abs(jm) >= n / 2) continue;
    marks.push_back({s.name, s.l, s.m, s.apparent(p.obs.centre_hz()), int(jl) + n / 2, int(jm) + n / 2});
  }
  return marks;
}

PeakCheck check_peak(const Problem& p, const float* image) {
  PeakCheck pk;
  if (!p.has_sky || p.sky.sources.empty()) {
    pk.why_not = "no sky model";
    return pk;
  }
  const int n = p.imaging.image_size;
  const std::vector<double> total = total_intensity(p, image, &pk.why_not);
  if (total.empty()) return pk;

  const Source& s = brightest(p.sky, p.obs.centre_hz());
  pk.source = s.name;
  pk.l = s.l;
  pk.m = s.m;
  const double scale = n * p.imaging.grid_spacing;  // pixels per unit of l
  const long jl = std::lround(s.l * scale), jm = std::lround(s.m * scale);
  if (std::abs(jl) >= n / 2 - kPeakWindow || std::abs(jm) >= n / 2 - kPeakWindow) {
    pk.why_not = s.name + " lies outside the image at this grid spacing";
    return pk;
  }
  pk.done = true;
  pk.expect_l = int(jl) + n / 2;
  pk.expect_m = int(jm) + n / 2;
  double best = -HUGE_VAL;
  for (int dm = -kPeakWindow; dm <= kPeakWindow; ++dm)
    for (int dl = -kPeakWindow; dl <= kPeakWindow; ++dl) {
      const int m = pk.expect_m + dm, l = pk.expect_l + dl;
      const double v = total[size_t(m) * n + l];
      if (v > best || !std::isfinite(v)) {
        best = v;
        pk.found_l = l;
        pk.found_m = m;
      }
    }
  const double peak = *std::max_element(total.begin(), total.end());
  pk.fraction = peak > 0 ? best / peak : 0;
  pk.pass = std::isfinite(best) && std::abs(pk.found_l - pk.expect_l) <= kPeakTolerance &&
            std::abs(pk.found_m - pk.expect_m) <= kPeakTolerance && pk.fraction >= kPeakFraction;
  return pk;
}

Verdict validate(const Problem& p, Accuracy accuracy, const float* image, uint64_t seed, ReferenceKind reference) {
  Verdict v;
  v.reference = reference;
  v.channels = validation_channels(p.obs.channels, seed);
  v.planes = plane_names(p.imaging.products);
  v.threshold = rel_l2_threshold(accuracy);
  const int n = p.imaging.image_size, C = p.obs.channels, Q = int(v.planes.size());
  const size_t nn = size_t(n) * n, K = v.channels.size();
  const std::vector<double> ref = reference_images(p, v.channels, reference);

  std::vector<double> all_ref, all_test;
  all_ref.reserve(ref.size());
  all_test.reserve(ref.size());
  bool finite = true;
  for (int q = 0; q < Q; ++q) {
    double err = 0, norm = 0;
    for (size_t k = 0; k < K; ++k)
      for (size_t i = 0; i < nn; ++i) {
        const double r = ref[(size_t(q) * K + k) * nn + i];
        const double t = image[(size_t(q) * C + size_t(v.channels[k])) * nn + i];
        finite = finite && std::isfinite(t);
        err += (t - r) * (t - r);
        norm += r * r;
        all_ref.push_back(r);
        all_test.push_back(t);
      }
    v.plane_rel_l2.push_back(norm > 0 ? std::sqrt(err / norm) : (err > 0 ? HUGE_VAL : 0.0));
  }
  v.metrics = core::compare(all_ref, all_test);
  v.worst = v.plane_rel_l2.empty() ? 0 : *std::max_element(v.plane_rel_l2.begin(), v.plane_rel_l2.end());
  if (!finite) v.worst = HUGE_VAL;
  v.peak = check_peak(p, image);
  v.power = check_power(p, accuracy, image);

  v.pass = finite && v.worst <= v.threshold && v.power.pass && (!v.peak.done || v.peak.pass);
  // Every reason, not only the first: a mirrored sky fails both the error and the peak.
  char text[512];
  auto add = [&v](const std::string& why) { v.failure += (v.failure.empty() ? "" : "; ") + why; };
  if (!finite) add("the image holds NaN or Inf");
  if (finite && v.worst > v.threshold) {
    const size_t q = size_t(std::max_element(v.plane_rel_l2.begin(), v.plane_rel_l2.end()) - v.plane_rel_l2.begin());
    snprintf(text, sizeof text, "plane %s: rel_l2 %.3g above the %s limit %.3g", v.planes[q].c_str(), v.worst,
             accuracy_name(accuracy), v.threshold);
    add(text);
  }
  if (finite && !v.power.pass) {
    const PowerCheck& w = v.power;
    snprintf(text, sizeof text,
             "channel %d plane %s: its pixels sum to %.7g (grid correction divided out), the correlator's zero "
             "baseline gives %.7g: off by %.3g of the autocorrelation power, above the %s limit %.3g "
             "(%d of %d channel planes over it)",
             w.worst_channel, v.planes[size_t(w.worst_plane)].c_str(), w.step_sum, w.reference_sum, w.worst,
             accuracy_name(accuracy), w.threshold, w.failing, int(w.error.size()));
    add(text);
  }
  if (v.peak.done && !v.peak.pass) {
    snprintf(text, sizeof text, "%s should peak at pixel (l %d, m %d); the peak near it is at (%d, %d) with %.2f of the image's peak",
             v.peak.source.c_str(), v.peak.expect_l, v.peak.expect_m, v.peak.found_l, v.peak.found_m, v.peak.fraction);
    add(text);
  }
  return v;
}

}  // namespace epic
