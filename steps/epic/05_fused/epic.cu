// epic 05_fused: the whole imaging of a sample in one block, on chip. One block per (channel,
// slice of the gulp's samples); for each of its samples the block
//   grids     each cell from its list of (stand, weight) (02's lists), straight into the
//             registers of the thread that transforms it: nothing zeroed, no atomics,
//   transforms the grid of each polarization with its own 2D inverse FFT in shared memory:
//             64-point transforms of the columns, then of the rows, each split 64 = 8 x 8
//             (two rounds of 8-point transforms in registers, the twiddles between them),
//   multiplies the fields of the two polarizations at the 8 pixels a thread ends up holding,
//             and adds the products to sums kept in registers,
// and after its last sample adds the sums to the image. No grid, field or product ever goes
// to global memory: per gulp the kernel reads the voltage bytes and writes the image once.
// The copy (second stream, two buffers), the autocorrelations and `finish` are 04's.
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
  return {"05_fused", "GPU, fused: grid, 2D FFT and products of each sample in one block's shared memory, image written once",
          true, Accuracy::fp32,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Fused>(core::tunable(t, "slices")); }

}  // namespace epic
