// Validation of a step's image against a CPU double reference (reference.hpp), by accuracy
// class, plus a physical check: the brightest simulated source peaks at its (l, m) pixel.
// Thresholds and the errors they come from: steps/epic/README.md, "Validation".
#pragma once
#include <string>
#include <vector>

#include "metrics.hpp"
#include "problem.hpp"
#include "reference.hpp"
#include "step.hpp"

namespace epic {

double rel_l2_threshold(Accuracy a);
const char* accuracy_name(Accuracy a);

// The channels compared: all of them up to 16; beyond, 8: the first, the last and 6 drawn with
// the seed (the reference costs stands^2 x samples per channel).
constexpr int kMaxValidatedChannels = 16, kSampledChannels = 8;
std::vector<int> validation_channels(int channels, uint64_t seed);

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
  bool pass = false;
  std::string failure;
};

// `image` is the step's output, (plane, channel, m, l).
Verdict validate(const Problem& p, Accuracy accuracy, const float* image, uint64_t seed, ReferenceKind reference);

}  // namespace epic
