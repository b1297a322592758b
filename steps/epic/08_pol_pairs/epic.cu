// epic 08_pol_pairs: the whole imaging of a sample in one block, on chip. One block per (channel,
// slice of the gulp's samples); for each of its samples the block
//   grids     each cell from its list of (stand, weight) (02's lists), straight into the
//             registers of the thread that transforms it: nothing zeroed, no atomics,
//   transforms one grid of pairs, both polarizations side by side, 2D inverse FFT in shared memory:
//             64-point transforms of the columns that hold a stand (an empty column's is zero),
//             then of the rows, each split 64 = 8 x 8 (two rounds of 8-point transforms in
//             registers, the twiddles between them), two samples a trip so that every thread
//             has a column,
//   multiplies the fields of the two polarizations at the 8 pixels a thread ends up holding,
//             and adds the products to sums kept in registers,
// and after its last sample adds the sums to the image. No grid, field or product ever goes
// to global memory: per gulp the kernel reads the voltage bytes and writes the image once.
// The copy (second stream, two buffers), the autocorrelations and `finish` are 04's.
// Against 07: a cell is a Pair of float2, (X.re, Y.re) and (X.im, Y.im), so one transform loop
// does both polarizations: 07's bytes and arithmetic in the layout half2 will need (09).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

#include <image_samples.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"08_pol_pairs", "GPU, fused as 07, both polarizations of a cell side by side: one grid of float2 pairs",
          true, Accuracy::fp32,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Fused>(core::tunable(t, "slices")); }

}  // namespace epic
