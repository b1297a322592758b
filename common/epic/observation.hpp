// What the F-engine delivers: LWA-SV's channelization (25 kHz channels, one complex sample per
// channel every 40 us), a block of contiguous channels, and the samples in gulps.
#pragma once
#include <cstddef>

namespace epic {

constexpr double kSpeedOfLight = 299792458.0;  // m/s
constexpr double kChannelWidthHz = 25e3;
constexpr double kSampleSeconds = 40e-6;        // 1 / channel width
constexpr int kMaxChannels = 132;               // one F-engine output block of LWA-SV
constexpr double kBandLowHz = 10e6, kBandHighHz = 88e6;  // LWA-SV's band

struct Observation {
  double first_channel_hz = 38e6;  // centre frequency of the first channel
  int channels = 0;
  int samples_per_gulp = 0;
  int gulps = 1;
  int pols = 2;

  double frequency(int c) const { return first_channel_hz + c * kChannelWidthHz; }
  double wavelength(int c) const { return kSpeedOfLight / frequency(c); }
  double centre_hz() const { return frequency(0) + 0.5 * (channels - 1) * kChannelWidthHz; }
  int samples() const { return samples_per_gulp * gulps; }
  // Bytes of voltages: (samples, channels, stands, pols), one byte each.
  size_t voltage_bytes(int stands) const { return size_t(samples()) * channels * stands * pols; }
  // Sky time one gulp spans.
  double gulp_seconds() const { return samples_per_gulp * kSampleSeconds; }
};

}  // namespace epic
