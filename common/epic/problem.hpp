// The EPIC problem: a station, an observation, the voltages the F-engine delivered, and how to
// image them. Generated from a seed (station, sky and voltages) or read from a folder
// (datasets/epic.md); the imaging parameters come from the flags either way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // params() only declared: GPU steps include this header

#include "epic/gridding.hpp"
#include "epic/observation.hpp"
#include "epic/products.hpp"
#include "epic/sky.hpp"
#include "epic/station.hpp"

namespace epic {

struct Imaging {
  int image_size = 64;
  double grid_spacing = 0.5;  // wavelengths per cell: the image spans l in [-1, 1)
  int support = 2;
  KernelKind kernel = KernelKind::pswf;  // for support 2 and 3 (support 1 is the delta)
  std::vector<Product> products;
  bool remove_autos = false;
};

// The built-in sizes (README "Flags and presets"): all 64 x 64, two polarizations, one gulp.
struct Preset {
  int channels, samples_per_gulp;
};
Preset preset_of_size(const std::string& size);  // tiny | small | large

struct Problem {
  std::string name;  // tiny | small | large | custom | the folder's name
  uint64_t seed = 1;
  Station station;
  Observation obs;
  bool has_sky = false;  // false for a folder without a sky model: no peak check
  Sky sky;
  Imaging imaging;
  std::vector<uint8_t> voltages;  // (samples, channels, stands, pols)

  // Derived from the above by finish().
  GridPlan plan;
  std::vector<double> correction;  // per axis, image order

  std::vector<double> wavelengths() const;
  nlohmann::json params() const;
  // FNV-1a of the parameters, the stand positions and the voltage bytes: equal digests, equal
  // problems, whatever made them.
  std::string digest() const;
};

// Simulates the voltages of `p.station` under `p.sky` for `p.obs` with `p.seed`.
void simulate_voltages(Problem& p);
// Builds the gridding plan and the grid correction from p.imaging (after any change to it).
void finish(Problem& p);

// The folder format (datasets/epic.md): meta.json, stands.csv, voltages.npy. Refuses anything
// inconsistent with core::UsageError naming the file.
Problem load_folder(const std::string& dir);
void save_folder(const Problem& p, const std::string& dir);

// Checks observation limits (channels, band, sizes); UsageError naming the flag.
void check_observation(const Observation& obs, int stands);

}  // namespace epic
