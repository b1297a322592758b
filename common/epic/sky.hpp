// The sky simulator: what the F-engine of an LWA-SV-like station would deliver looking at a sky
// of point sources, a diffuse background and receiver noise.
//
// A source at direction cosines (l, m), n = sqrt(1 - l^2 - m^2), reaches stand a with the
// geometric phase exp(-2 pi i (e_a l + n_a m + u_a (n - 1)) / lambda) (the array phased to
// zenith). Its signal is noise: in every sample and channel each polarization gets an
// independent circular complex Gaussian amplitude of power F/2, F its apparent flux density
// F = S_74 (nu / 74 MHz)^alpha * n (a dipole-like taper toward the horizon), so an unpolarized
// source gives XX + YY = F. The diffuse background is many faint sources spread uniformly over
// the visible hemisphere: correlated between stands like the real sky (receiver noise, by
// contrast, is independent per stand and polarization).
//
// Quantization as an F-engine does it: a gain per channel and polarization that brings the rms
// of each component to 2.5 levels, rounding to the nearest level, clipping to [-7, 7], packed
// 4+4 bits (voltage.hpp), in the layout (time, channel, stand, pol).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "epic/observation.hpp"
#include "epic/station.hpp"

namespace epic {

struct Source {
  std::string name;
  double l = 0, m = 0;
  double flux_74 = 0;         // Jy at 74 MHz
  double spectral_index = 0;  // S ~ nu^alpha
  double n() const;
  double apparent(double freq_hz) const;  // the flux density the stands see, Jy
};

struct Sky {
  std::vector<Source> sources;  // named point sources
  std::vector<Source> diffuse;  // the faint ones that make up the background
  double receiver_noise = 0;    // Jy-equivalent power per stand and polarization
};

constexpr double kQuantizerRms = 2.5;  // levels, per real component

// A few A-team-like sources at realistic relative fluxes (74 MHz values and spectral indices
// after Baars et al. 1977, Cas A decayed to the present): Cyg A-like near the zenith, Cas A-like
// low in the north-west, Tau A- and Vir A-like between. Their (l, m) are multiples of 1/32: pixel
// centres of the 64 and 128 images at the default grid spacing. Plus 64 diffuse sources
// (seeded) totalling 30 kJy at 74 MHz (about half of it seen through the taper) and receiver
// noise of 20 kJy per stand and polarization.
Sky default_sky(uint64_t seed);
// The named source that is brightest at `freq_hz` as the stands see it.
const Source& brightest(const Sky& sky, double freq_hz);

// The voltages, (samples, channels, stands, pols) bytes. Each channel has its own random
// stream, so the bytes do not depend on the number of threads.
std::vector<uint8_t> simulate(const Station& station, const Sky& sky, const Observation& obs, uint64_t seed);

}  // namespace epic
