#include "epic/sky.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>

#include "epic/rng.hpp"
#include "epic/voltage.hpp"

namespace epic {

using core::kPi;

double Source::n() const { return std::sqrt(std::max(0.0, 1 - l * l - m * m)); }

double Source::apparent(double freq_hz) const {
  return flux_74 * std::pow(freq_hz / 74e6, spectral_index) * n();
}

Sky default_sky(uint64_t seed) {
  Sky sky;
  // Fluxes at 74 MHz from Baars et al. (1977): Cyg A 17.1 kJy (their curved spectrum is about
  // nu^-0.58 below 100 MHz), Cas A 22.9 kJy at epoch 1965, about 15 kJy after its secular decay,
  // Tau A 2.27 kJy, Vir A 2.65 kJy.
  sky.sources = {{"Cyg A-like", 4 / 32.0, 8 / 32.0, 17100, -0.58},
                 {"Cas A-like", -20 / 32.0, 21 / 32.0, 15000, -0.77},
                 {"Vir A-like", -9 / 32.0, -15 / 32.0, 2650, -0.86},
                 {"Tau A-like", 18 / 32.0, -14 / 32.0, 2270, -0.30}};
  // The background: sources uniform in solid angle over the hemisphere (n uniform on (0, 1]),
  // exponentially distributed fluxes, a galactic-like spectrum.
  Rng rng(seed, Stream::diffuse_sky);
  const int count = 64;
  const double total = 30000;
  for (int i = 0; i < count; ++i) {
    const double n = rng.uniform(), phi = 2 * kPi * rng.uniform();
    const double r = std::sqrt(1 - n * n);
    const double flux = total / count * -std::log(rng.uniform());
    sky.diffuse.push_back({"diffuse", r * std::cos(phi), r * std::sin(phi), flux, -0.55});
  }
  sky.receiver_noise = 20000;
  return sky;
}

const Source& brightest(const Sky& sky, double freq_hz) {
  if (sky.sources.empty()) throw std::logic_error("brightest: no named source");
  return *std::max_element(sky.sources.begin(), sky.sources.end(),
                           [&](const Source& a, const Source& b) { return a.apparent(freq_hz) < b.apparent(freq_hz); });
}

std::vector<uint8_t> simulate(const Station& station, const Sky& sky, const Observation& obs, uint64_t seed) {
  const int A = station.size(), P = obs.pols, C = obs.channels, T = obs.samples();
  std::vector<const Source*> all;
  for (const Source& s : sky.sources) all.push_back(&s);
  for (const Source& s : sky.diffuse) all.push_back(&s);
  const int S = int(all.size());
  std::vector<uint8_t> bytes(obs.voltage_bytes(A));

#pragma omp parallel for schedule(dynamic)
  for (int c = 0; c < C; ++c) {
    Rng rng(seed, Stream::channel, uint64_t(c));
    const double lambda = obs.wavelength(c);
    // Geometric phases (source, stand) and source powers in this channel, as separate real
    // and imaginary arrays so that the sum over sources below runs along the stands.
    std::vector<double> phase_re(size_t(S) * A), phase_im(size_t(S) * A), power(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) {
      const Source& src = *all[size_t(s)];
      power[size_t(s)] = src.apparent(obs.frequency(c));
      for (int a = 0; a < A; ++a) {
        const double path = station.east[size_t(a)] * src.l + station.north[size_t(a)] * src.m + station.up[size_t(a)] * (src.n() - 1);
        phase_re[size_t(s) * A + a] = std::cos(-2 * kPi * path / lambda);
        phase_im[size_t(s) * A + a] = std::sin(-2 * kPi * path / lambda);
      }
    }
    // Unquantized voltages of this channel, (t, a, p).
    std::vector<std::complex<double>> e(size_t(T) * A * P);
    std::vector<double> v_re(static_cast<size_t>(A)), v_im(static_cast<size_t>(A));
    for (int t = 0; t < T; ++t)
      for (int p = 0; p < P; ++p) {
        for (int a = 0; a < A; ++a) {
          const std::complex<double> noise = rng.complex_normal(sky.receiver_noise);
          v_re[size_t(a)] = noise.real();
          v_im[size_t(a)] = noise.imag();
        }
        for (int s = 0; s < S; ++s) {
          const std::complex<double> amp = rng.complex_normal(power[size_t(s)] / 2);
          const double ar = amp.real(), ai = amp.imag();
          const double* pr = &phase_re[size_t(s) * A];
          const double* pi = &phase_im[size_t(s) * A];
          for (int a = 0; a < A; ++a) {
            v_re[size_t(a)] += ar * pr[a] - ai * pi[a];
            v_im[size_t(a)] += ar * pi[a] + ai * pr[a];
          }
        }
        for (int a = 0; a < A; ++a) e[(size_t(t) * A + a) * P + p] = {v_re[size_t(a)], v_im[size_t(a)]};
      }
    // The F-engine's gain: rms of each component to kQuantizerRms levels, per polarization.
    for (int p = 0; p < P; ++p) {
      double sum = 0;
      for (int t = 0; t < T; ++t)
        for (int a = 0; a < A; ++a) sum += std::norm(e[(size_t(t) * A + a) * P + p]);
      const double rms = std::sqrt(sum / (2.0 * T * A));
      const double gain = rms > 0 ? kQuantizerRms / rms : 0;
      auto level = [&](double x) { return int(std::max(-double(kMaxLevel), std::min(double(kMaxLevel), std::nearbyint(x * gain)))); };
      for (int t = 0; t < T; ++t)
        for (int a = 0; a < A; ++a) {
          const std::complex<double> v = e[(size_t(t) * A + a) * P + p];
          bytes[((size_t(t) * C + c) * A + a) * P + p] = pack_nibbles(level(v.real()), level(v.imag()));
        }
    }
  }
  return bytes;
}

}  // namespace epic
