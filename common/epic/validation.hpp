// Validation of a step's image against a CPU double reference (reference.hpp), by accuracy
// class, on every channel where that is cheap and on a seeded sample beyond; every channel's
// every plane against the correlator's zero baseline (reference.hpp, zero_lag); and a physical
// check: the brightest simulated source peaks at its (l, m) pixel.
// Thresholds and the errors they come from: steps/epic/README.md, "Validation".
#pragma once
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "epic/problem.hpp"
#include "epic/reference.hpp"
#include "epic/step.hpp"

namespace epic {

double rel_l2_threshold(Accuracy a);
const char* accuracy_name(Accuracy a);

// The channels compared pixel by pixel: all of them up to 16; beyond, 8: the first, the last
// and 6 drawn with the seed (the reference costs stands^2 x samples per channel).
constexpr int kMaxValidatedChannels = 16, kSampledChannels = 8;
std::vector<int> validation_channels(int channels, uint64_t seed);

// Every channel and plane, whatever the size: the image's pixels summed with the grid
// correction divided out (the reference's own correction) against the correlator's zero
// baseline over every sample of every gulp, the difference in units of the autocorrelation
// power (ZeroLag::scale). It sees a channel zeroed, swapped, duplicated or imaged from the wrong
// bytes, a gulp dropped or imaged twice, and a grid correction that is not the kernel's: the
// channels' and gulps' powers differ by their sample noise (about 1 / sqrt(samples x stands),
// more with the sky's correlated part), above the limit for every size the tests use; the
// limits and the figures behind them: power_threshold, steps/epic/README.md, "Validation".
double power_threshold(Accuracy a);
struct PowerCheck {
  std::vector<double> error;     // (plane, channel)
  double worst = 0;              // the largest error (HUGE_VAL for a non-finite image)
  int worst_plane = 0, worst_channel = 0;
  double step_sum = 0, reference_sum = 0, scale = 0;  // of the worst
  int failing = 0;               // (plane, channel) over the limit
  double threshold = 0;
  bool pass = true;
};
PowerCheck check_power(const Problem& p, Accuracy accuracy, const float* image);

// Where the brightest named source should appear and where the image has its peak.
struct PeakCheck {
  bool done = false;       // false without a sky model, or when the source lies outside the image
  std::string why_not;     // when not done
  std::string source;
  double l = 0, m = 0;
  int expect_l = 0, expect_m = 0;  // pixel (column, row) of the source
  int found_l = 0, found_m = 0;    // brightest pixel within kPeakWindow of it
  double fraction = 0;             // that pixel over the image's brightest pixel
  bool pass = true;
};
constexpr int kPeakWindow = 3;          // pixels around the source searched for its peak
constexpr int kPeakTolerance = 1;       // the peak may sit this many pixels from the source pixel
constexpr double kPeakFraction = 0.5;   // and must hold at least this share of the image's peak

// The total-intensity image a step produced (I, else XX + YY, else XX or YY), summed over
// channels, (m, l); empty when the products hold no total intensity (`why` says so).
std::vector<double> total_intensity(const Problem& p, const float* image, std::string* why = nullptr);

// The peak check on the total-intensity image.
PeakCheck check_peak(const Problem& p, const float* image);

// A named source of the sky model where the image shows it: pixel (column l, row m).
struct SkyMark {
  std::string name;
  double l = 0, m = 0, flux = 0;  // flux: Jy the stands see at the band's centre
  int pixel_l = 0, pixel_m = 0;
};
// The named sources that fall inside the image (none without a sky model).
std::vector<SkyMark> sky_marks(const Problem& p);

struct Verdict {
  ReferenceKind reference = ReferenceKind::fx;
  std::vector<int> channels;
  std::vector<std::string> planes;
  std::vector<double> plane_rel_l2;  // per plane over the compared channels
  core::ErrorMetrics metrics;        // all compared values together
  double worst = 0;                  // the largest plane_rel_l2
  double threshold = 0;
  PeakCheck peak;
  PowerCheck power;
  bool pass = false;
  std::string failure;
};

// `image` is the step's output, (plane, channel, m, l).
Verdict validate(const Problem& p, Accuracy accuracy, const float* image, uint64_t seed, ReferenceKind reference);

}  // namespace epic
