// epic 11_folded_128: 128 x 128 images without an exchange between blocks. 10 splits one
// image's transform over a cluster of four blocks, and every sample's transpose crosses the
// cluster. Here each of four independent blocks makes a quarter of the image's rows, the rows
// ky = 4 j + part (j < 32), from the voltages alone:
//   fold     e^{2 pi i y (4 j + part) / 128} = e^{2 pi i y0 j / 32} e^{2 pi i y part / 128} for
//            y = y0 + 32 m: the column transform at those 32 rows is a 32-point transform of the
//            column folded onto 32 cells, z[y0] = sum_m x[y0 + 32 m] e^{2 pi i (y0 + 32 m) part / 128}.
//            The factor is folded into the gridding weights (complex, one set per part), so the
//            gather makes z directly;
//   columns  only the occupied ones (06's lesson: ~28 of 128 at 38 MHz), 32 = 4 x 8 points,
//            trips of two samples as 07;
//   rows     the block's 32 rows, 128 = 16 x 8 points, reading only the occupied columns;
//   products both polarizations in half2 pairs (09's cells), products and sums in float.
// Across the four blocks the folded column transforms cost what one 128-point transform
// does; nothing leaves the SM. The copy, the autocorrelations and `finish` are 04's.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

#include <dft8.cuh>
#include <folded_lists.cuh>

#include <image_samples.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"11_folded_128",
          "GPU, 128 x 128 with no exchange: four independent blocks a channel, each a quarter of the rows from folded "
          "columns, occupied columns only, half2 cells",
          true, Accuracy::half,
          {{"slices", 0, 0, 1000, "Blocks per (channel, quarter), each imaging a share of a gulp's samples (0: enough to fill every SM)"}},
          {{"--image-size", "128"}}};  // the only size it makes
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Folded>(core::tunable(t, "slices")); }

}  // namespace epic
