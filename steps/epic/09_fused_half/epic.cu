// epic 09_fused_half: the whole imaging of a sample in one block, on chip. One block per (channel,
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
// Against 08: the Pair is of half2, so every add and multiply of the transform is one half2
// instruction for the two polarizations, where 08 needed two float instructions, and a cell
// takes 8 bytes of shared memory, not 16. The cells are gathered in float and rounded to half
// once; the products are formed and summed in float. Validation uses the half class.
#include <cuda_fp16.h>
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
  return {"09_fused_half", "GPU, fused as 07, both polarizations of a cell in half2: half the instructions and bytes of the FFT",
          true, Accuracy::half,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"},
           {"min-blocks", 1, 1, 2,
            "Blocks each SM must hold at once: 1 lets a thread use 128 registers, 2 caps it at 64 (twice the warps, "
            "values spilled: slower on an H100 since a trip holds two samples, see the README)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<Fused>(core::tunable(t, "slices"), core::tunable(t, "min-blocks"));
}

}  // namespace epic
