// The interface every EPIC step implements. The harness (main.cpp) owns everything else: flags,
// the station, the simulated sky and voltages, the gridding plan and grid correction, timing,
// validation against the double-precision references, output and results.
//
// A step source file defines step_info() and make_step(); nothing more is needed for it to
// become a program `epic_NN_name`.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/fields.hpp"
#include "core/step_info.hpp"
#include "epic/products.hpp"

namespace epic {

// Accuracy classes and their thresholds: steps/epic/README.md, "Validation".
enum class Accuracy {
  fp32,  // single-precision fields and accumulation
  half,  // half-precision fields, float accumulation
};

using StepInfo = core::StepInfo<Accuracy>;

// What a step reads. Everything is host memory; a GPU step moves what it needs.
struct Inputs {
  int image_size;  // N: the grid and the image are N x N (64 or 128)
  int support;     // S: each stand covers S x S cells (1 .. 3)
  int stands, channels, pols;
  int samples_per_gulp, gulps;
  // The F-engine's bytes, (gulps * samples_per_gulp, channels, stands, pols); decode with
  // voltage.hpp. Gulp g is the samples g * samples_per_gulp .. (g + 1) * samples_per_gulp - 1.
  const uint8_t* voltages;
  // The gridding plan, (channel, stand): stand a of channel c goes to the S x S cells
  // ((cell_y + i) mod N, (cell_x + k) mod N), i, k < S, with weight weight_y[i] * weight_x[k],
  // weights (channel, stand, S). Support 1: one cell, weight 1.
  const int32_t *cell_x, *cell_y;
  const float *weight_x, *weight_y;
  // Grid correction in image order: multiply the finished pixel (m, l) by correction[m] * correction[l].
  const float* correction;
  const Product* products;
  int product_count;
  int planes;          // plane_count(products)
  bool remove_autos;   // subtract the autocorrelations exactly (--no-autos)

  size_t image_values() const { return size_t(planes) * channels * image_size * image_size; }
};

// The output: the image accumulated over all gulps, float (plane, channel, m, l), pixel (m, l) at
// l = (l - N/2) / (N grid_spacing), m likewise (the zero of l and m at index N/2): the inverse
// transform's output rotated by N/2 in both axes.
class Step {
 public:
  virtual ~Step() = default;
  // Allocate (first call only) and keep what compute() needs.
  virtual void load(const Inputs& in) = 0;
  // Image every gulp and accumulate; the harness times exactly this call. A GPU step's copies
  // of the voltages belong here: the time per gulp runs from the voltages in host memory to
  // the accumulated image.
  virtual void compute() = 0;
  // Copy the image (Inputs::image_values() floats) to `image`.
  virtual void store(float* image) = 0;
  // Parameters the step chose itself, for the record's "params".
  virtual void describe(core::Fields& params) const { (void)params; }
};

StepInfo step_info();
std::unique_ptr<Step> make_step(const core::Tunables& tunables);

}  // namespace epic
