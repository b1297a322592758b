// epic 12_tensor_dft: 09's fused imaging, with the 2D transform of a sample as two complex matrix
// products on the tensor cores instead of an FFT in half2. One block per (channel, slice of the
// gulp's samples); for each of its samples the block
//   grids     the cells of the occupied rows and columns (about 30 x 28 of 64 x 64 at 38 MHz)
//             from their lists of (stand, weight), in float, rounded once to half and stored as
//             the tensor cores' operand fragments,
//   transforms the columns: H = W_col G, W_col the 64 x rows DFT matrix of the occupied rows
//             (every image row, the N/2 shift folded in), one mma.sync m16n8k16 per 16 x 8 x 16
//             piece, half operands, float sums; H is rounded to half and kept in shared memory,
//             already in the second product's fragment order,
//   transforms the rows: F = H W_row^T, W_row the DFT matrix of the occupied columns, the
//             tiles of F in each warp's registers, both polarizations at the same pixels,
//   multiplies the fields of the two polarizations at the pixels a thread holds and adds the
//             products to sums kept in registers,
// and after its last sample adds the sums to the image. A complex product is a real one of twice
// the depth: [H_re | H_im] = [W_re -W_im ; W_im W_re] [G_re ; G_im]. The occupied rows and columns
// come in chunks of 8, so that a chunk's real and imaginary parts fill one k = 16 step of the mma.
// The copy (second stream, two buffers), the autocorrelations and `finish` are 04's.
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

#include <DftPlan.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"12_tensor_dft", "GPU, fused as 09, each sample's 2D transform as two complex matrix products on the tensor cores "
                           "(mma.sync, half operands, float sums)",
          true, Accuracy::half,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<TensorDft>(core::tunable(t, "slices")); }

}  // namespace epic
