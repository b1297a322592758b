// epic 13_band_split: 09_fused_half's imager with the band split over GPUs, one process per GPU
// (a launcher starts them: README.md, "Several GPUs"). Rank r of R images its own contiguous
// group of channels, the first C % R ranks one channel more than the others. The F-engine
// already sends groups of channels to different servers, so a rank's inputs are its group's
// alone (ChannelGroup, epic/gpu.cuh): per gulp it copies only its channels' voltages host ->
// device, 1/R of the bytes on each GPU's link, and runs 09's kernel over them, unchanged: the
// whole imaging of a sample in one block, on chip. One block per (channel,
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
// The Pair is of half2, both polarizations in one instruction (09's). Against 09: after the last
// gulp and `finish`, the groups' images are gathered once through NCCL into every rank's image
// of the whole band (every rank validates it; rank 0 writes it). With one rank the group is the
// band and the gather a copy: 09. Validation uses the half class.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/communicator.cuh"
#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "core/ranks.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

#include <dft8.cuh>

#include <image_samples.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"13_band_split", "GPU, 09's fused imager with the band split over GPUs: a group of channels a GPU, "
                           "the images gathered through NCCL",
          true, Accuracy::half,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"},
           {"min-blocks", 1, 1, 2,
            "Blocks each SM must hold at once: 1 lets a thread use 128 registers, 2 caps it at 64 (twice the warps, "
            "values spilled: slower on an H100 since a trip holds two samples, see the README)"}},
          {},     // the track's flag defaults, unchanged
          true};  // multi_gpu: one process per GPU (core/harness.hpp)
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<Fused>(core::tunable(t, "slices"), core::tunable(t, "min-blocks"));
}

}  // namespace epic
