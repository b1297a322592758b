// epic 10_cluster_128: 05's fused imaging at 128 x 128, where one image no longer fits one
// block: a 128 x 128 grid of two polarizations is 256 KB, more than an SM's 227 KB of shared
// memory. A thread-block cluster of four blocks (four SMs) images one (channel, slice): each
// block owns a quarter of the columns for the column transforms and a quarter of the rows for
// the row transforms, and the one exchange between the two, the transpose, goes through
// distributed shared memory: a block reads the other three blocks' shared memory directly.
// Per sample, each block
//   grids     its 32 columns from the cell lists (05's gather), a polarization per thread,
//   transforms them (128 = 16 x 8: a 16-point DFT in registers, twiddles, an exchange through
//             its own shared memory, an 8-point DFT) into grid A, its quarter of the columns,
//   waits     for the cluster (cluster.sync: every block's A is complete),
//   transforms its 32 rows, reading each row's 128 cells from the four blocks' A,
//   waits     for the cluster again (no block overwrites its A while another may read it),
//   multiplies and accumulates in registers, as 03.
// The copy, the autocorrelations and `finish` are 04's.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

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
  return {"10_cluster_128", "GPU, 128 x 128 fused: a cluster of four blocks shares each image's FFT through distributed shared memory",
          true, Accuracy::fp32,
          {{"slices", 0, 0, 1000, "Clusters per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}},
          {{"--image-size", "128"}}};  // the only size it makes
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Cluster>(core::tunable(t, "slices")); }

}  // namespace epic
