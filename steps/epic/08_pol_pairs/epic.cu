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

constexpr int kN = 64;            // the image this step makes: 64 x 64 (128 x 128 is 10's)
constexpr int kRow = kN + 1;      // a grid row in shared memory, padded: rows and columns both conflict-free
constexpr int kThreads = kN * 8;  // a thread per (row or column, eighth): 512

// A cell of both polarizations: re = (X.re, Y.re), im = (X.im, Y.im).
struct Pair {
  float2 re, im;
};

// e^{+2 pi i m / 64}: the inverse transform's twiddles, made in double on the host.
__constant__ float2 c_twiddle[kN];

// On a float2 of the two polarizations, element by element.
__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 scale2(float2 a, float h) { return make_float2(a.x * h, a.y * h); }
__device__ __forceinline__ float2 neg2(float2 a) { return make_float2(-a.x, -a.y); }

__device__ __forceinline__ Pair add(Pair a, Pair b) { return {add(a.re, b.re), add(a.im, b.im)}; }
__device__ __forceinline__ Pair sub(Pair a, Pair b) { return {sub(a.re, b.re), sub(a.im, b.im)}; }
__device__ __forceinline__ Pair twiddle(Pair a, int m) {  // a e^{2 pi i m / 64}, both polarizations at once
  const float2 w = c_twiddle[m];  // (cos, sin)
  return {sub(scale2(a.re, w.x), scale2(a.im, w.y)), add(scale2(a.re, w.y), scale2(a.im, w.x))};
}

// 4- and 8-point inverse DFTs in registers, natural order in and out: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(Pair& a0, Pair& a1, Pair& a2, Pair& a3) {
  const Pair t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const Pair t3 = {neg2(d.im), d.re};  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(Pair (&v)[8]) {
  Pair e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const float h = 0.70710678118654752f;  // e^{i pi/4} = h (1 + i)
  o1 = {scale2(sub(o1.re, o1.im), h), scale2(add(o1.re, o1.im), h)};
  o2 = {neg2(o2.im), o2.re};
  o3 = {neg2(scale2(add(o3.re, o3.im), h)), scale2(sub(o3.re, o3.im), h)};
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}

// A 64-point transform as 8 x 8, for the transform whose element e lies at line[e * step]:
// with e = 8 n1 + n2 and k = k1 + 8 k2,
//   X[k1 + 8 k2] = sum_n2 e^{2 pi i n2 k2 / 8} [ e^{2 pi i n2 k1 / 64} sum_n1 x[8 n1 + n2] e^{2 pi i n1 k1 / 8} ].
// Round two (thread k1): the outer 8-point DFT over n2 of elements 8 k1 .. 8 k1 + 7; v[k2]
// becomes X[k1 + 8 k2]. The caller writes it back (after every thread has read) or keeps it.
__device__ __forceinline__ void round_two(const Pair* line, int step, int k1, Pair (&v)[8]) {
#pragma unroll
  for (int n2 = 0; n2 < 8; ++n2) v[n2] = line[(8 * k1 + n2) * step];
  dft8(v);
}
// Round one of a row (thread n2 of the row's eight), in place: the inner 8-point DFT over n1
// and the twiddle, written back to the elements the thread read (8 k1 + n2 is again one of
// them). Element 8 n1 + n2 is read only where bit n1 of `occupied` is set: a column with no
// stand is zero (its transform too), and the grid's copy of it is stale. (The columns' round
// one is in the kernel: it gathers its input.)
__device__ __forceinline__ void round_one(Pair* line, int n2, unsigned occupied) {
  Pair v[8];
#pragma unroll
  for (int n1 = 0; n1 < 8; ++n1)
    v[n1] = occupied >> n1 & 1 ? line[8 * n1 + n2] : Pair{make_float2(0, 0), make_float2(0, 0)};
  dft8(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 8; ++k1) line[8 * k1 + n2] = twiddle(v[k1], n2 * k1);
}

// A block images a slice of one channel's samples, TRIP samples (2, or 1 where two do not fit
// in shared memory) a round trip. A thread is (lane, eighth). TRIP is a template parameter:
// the trip's loops unroll and its indices need no division. One grid of pairs a sample, both
// polarizations (with one, Y is zero), so the kernel no longer depends on their number.
//
// Columns: only the occupied ones are transformed (`column_lists`). Item i (i = lane, lane +
// 64, ...) of the trip's TRIP x occupied column transforms is column `column_order[i mod
// occupied]` of sample i / occupied: with two samples and at most 32 occupied columns every
// thread has one, and the 16 warps share the work evenly. Round one gathers the item's eight
// cells from their lists straight into registers (no zeroing, no atomics; each stand decoded
// once a sample into `fields`, staged a trip ahead) and writes A (a column per item, unpadded:
// only ever read down a column); round two reads A and writes the column into the sample's
// grid B. Rows: row `lane` of each sample's B, round one in place (reading only the occupied
// columns), round two into registers, where the products are summed. Three barriers a trip;
// A and B are what lets one barrier serve each exchange: a round never writes what another
// thread may still read.
//
// The sums of a pixel over the samples are the four numbers every product is made of: |X|^2,
// |Y|^2, and the real and imaginary parts of X conj(Y).
template <int TRIP>
__global__ void __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ column_order, const int32_t* __restrict__ occupied_columns,
                  const int2* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint4* __restrict__ entry_ends, int a_row, float* image) {
  extern __shared__ Pair shared[];
  constexpr int kGrid = kN * kRow;
  Pair* const grid_b = shared;                    // TRIP padded grids
  Pair* const grid_a = shared + TRIP * kGrid;     // kN rows of a_row items
  float4* const fields = reinterpret_cast<float4*>(grid_a + kN * a_row);  // 2 trips x TRIP x stands
  const int c = blockIdx.x, first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int lane = threadIdx.x % kN, eighth = threadIdx.x / kN, pols = s.pols;
  const int sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;
  const int occupied = __ldg(occupied_columns + c);
  const int32_t* columns = column_order + size_t(c) * kN;
  unsigned row_mask = 0;  // bit n1: column 8 n1 + eighth holds a stand
  for (int ci = 0; ci < occupied; ++ci) {
    const int x = __ldg(columns + ci);
    if (x % 8 == eighth) row_mask |= 1u << (x / 8);
  }

  // Thread a fetches stand a's bytes of a trip's samples two trips ahead and stages them
  // decoded one trip ahead.
  uint32_t ahead[TRIP] = {};
  auto fetch = [&](int t) {
#pragma unroll
    for (int k = 0; k < TRIP; ++k)
      if (int(threadIdx.x) < s.stands && t + k < last) {
        const uint8_t* b = channel_bytes + size_t(t + k) * sample_stride + threadIdx.x * pols;
        ahead[k] = pols > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
      }
  };
  auto stage = [&](int t) {
    float4* to = fields + ((t - first) / TRIP & 1) * TRIP * s.stands;
    if (int(threadIdx.x) < s.stands)
#pragma unroll
      for (int k = 0; k < TRIP; ++k) to[k * s.stands + threadIdx.x] = decode_stand(ahead[k], pols);
  };
  fetch(first);
  stage(first);
  fetch(first + TRIP);
  __syncthreads();

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (row lane, column eighth + 8 k)
  for (int t = first; t < last; t += TRIP) {
    const int count = min(TRIP, last - t), items = count * occupied;  // samples, column transforms
    // Columns, round one: gather the eight cells, both polarizations, from the staged fields.
    const float4* now = fields + ((t - first) / TRIP & 1) * TRIP * s.stands;
    for (int i = lane; i < items; i += kN) {
      const int sample = i >= occupied, ci = i - sample * occupied;  // TRIP <= 2: no division
      const size_t thread = (size_t(c) * kN + ci) * 8 + eighth;  // its run of gather entries
      const int2* run = entries + __ldg(entry_first + thread);
      const uint4 ends = __ldg(entry_ends + thread);
      const float4* f_of = now + sample * s.stands;
      Pair v[8];
#pragma unroll
      for (int n1 = 0; n1 < 8; ++n1) {
        float4 xy = make_float4(0, 0, 0, 0);
        for (int e = n1 > 0 ? cell_end(ends, n1 - 1) : 0; e < cell_end(ends, n1); ++e) {
          const int2 entry = run[e];  // (stand, weight)
          const float w = __int_as_float(entry.y);
          const float4 f = f_of[entry.x];
          xy.x += w * f.x, xy.y += w * f.y, xy.z += w * f.z, xy.w += w * f.w;
        }
        v[n1] = {make_float2(xy.x, xy.z), make_float2(xy.y, xy.w)};
      }
      dft8(v);
#pragma unroll
      for (int k1 = 0; k1 < 8; ++k1)  // k1 = 0: the twiddle is 1 (the loop is unrolled: no test at run time)
        grid_a[(8 * k1 + eighth) * a_row + i] = k1 == 0 ? v[0] : twiddle(v[k1], eighth * k1);
    }
    // The next trip's fields into the other buffer (last read a trip ago, before a barrier),
    // and the bytes of the one after that from global memory, a whole trip ahead of their use.
    if (t + TRIP < last) stage(t + TRIP);
    fetch(t + 2 * TRIP);
    __syncthreads();

    // Columns, round two: A's item -> its column of the sample's grid.
    for (int i = lane; i < items; i += kN) {
      const int sample = i >= occupied, x = __ldg(columns + i - sample * occupied);
      Pair v[8];
      round_two(grid_a + i, a_row, eighth, v);
#pragma unroll
      for (int k2 = 0; k2 < 8; ++k2) grid_b[sample * kGrid + (eighth + 8 * k2) * kRow + x] = v[k2];
    }
    __syncthreads();

    // Rows, round one, in place; round two into registers, then the products.
    for (int g = 0; g < count; ++g) round_one(grid_b + g * kGrid + lane * kRow, eighth, row_mask);
    __syncthreads();
    for (int sample = 0; sample < count; ++sample) {
      Pair v[8];
      round_two(grid_b + sample * kGrid + lane * kRow, 1, eighth, v);
      // v[k]: X = (re.x, im.x), Y = (re.y, im.y) at (row lane, column eighth + 8 k).
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float2 re = v[k].re, im = v[k].im;
        xx[k] = fmaf(re.x, re.x, fmaf(im.x, im.x, xx[k]));  // two fused multiply-adds a sum
        yy[k] = fmaf(re.y, re.y, fmaf(im.y, im.y, yy[k]));
        xy_re[k] = fmaf(re.x, re.y, fmaf(im.x, im.y, xy_re[k]));
        xy_im[k] = fmaf(im.x, re.y, fmaf(-re.x, im.y, xy_im[k]));
      }
    }
  }

  // The products of the slice, added to the image (zeroed once a run): a channel's slices add
  // into the same pixels, hence atomics. Zenith to the centre, as the other steps.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int jy = lane, jx = eighth + 8 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

class Fused final : public GpuStep {
 public:
  explicit Fused(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("08_pol_pairs images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 10_cluster_128's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("08_pol_pairs decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const ColumnLists lists = column_lists(in);  // 02's lists, a thread's run after another's, occupied columns first
    column_order_.upload(lists.column.data(), lists.column.size());
    occupied_.upload(lists.occupied.data(), lists.occupied.size());
    entries_.upload(lists.entry.data(), lists.entry.size());
    entry_first_.upload(lists.first.data(), lists.first.size());
    entry_ends_.upload(lists.ends.data(), lists.ends.size());
    occupied_max_ = *std::max_element(lists.occupied.begin(), lists.occupied.end());

    float2 twiddle[kN];
    for (int m = 0; m < kN; ++m) {
      const double phase = 2 * M_PI * m / kN;
      twiddle[m] = make_float2(float(std::cos(phase)), float(std::sin(phase)));
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_twiddle, twiddle, sizeof(twiddle)));

    // Shared memory per block, per_trip samples a round trip: a padded grid of pairs per sample,
    // A (a column of pairs per item of the busiest channel), and two trips'
    // decoded fields: 206,848 bytes with two samples, two polarizations, 28 occupied columns (LWA-SV
    // at 38 MHz) and 256 stands, far over the 48 KB a block gets without asking. One sample a
    // trip where two do not fit (a wide aperture: many occupied columns).
    int device = 0, sms = 0, per_sm = 0, most = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    auto shared_bytes = [&](int per_trip) {
      return (size_t(per_trip) * kN * kRow + size_t(kN) * per_trip * occupied_max_) * sizeof(Pair) +
             2 * size_t(per_trip) * in.stands * sizeof(float4);
    };
    per_trip_ = shared_bytes(2) <= size_t(most) ? 2 : 1;
    a_row_ = per_trip_ * occupied_max_;
    smem_ = shared_bytes(per_trip_);
    if (smem_ > size_t(most))
      throw core::UsageError("08_pol_pairs needs " + std::to_string(smem_) + " bytes of shared memory a block for " +
                             std::to_string(occupied_max_) + " occupied columns and " + std::to_string(in.stands) +
                             " stands; this GPU gives a block at most " + std::to_string(most));
    const void* kernel = per_trip_ > 1 ? (const void*)image_samples<2> : (const void*)image_samples<1>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + in.channels - 1) / in.channels;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(unsigned(in_.channels), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // 13 MB, once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      per_trip_ > 1 ? launch<2>(grid, samples, per_slice, pl, volts) : launch<1>(grid, samples, per_slice, pl, volts);
      CUDA_CHECK_LAUNCH();
      timer_.end();
      if (in_.remove_autos) {
        timer_.begin("autos");
        accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, 256), 256>>>(s_, samples, g == 0, volts, autos_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
      }
      gulps_.consumed(g);  // the image and autos kernels have read gulp g's buffer
    }
    finish(pl, 256);
  }

  void describe(core::Fields& params) const override {
    params.set("slices", slices_used_);  // blocks per channel
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("samples_per_trip", per_trip_);
    params.set("occupied_columns_max", occupied_max_);  // of kN, in the busiest channel
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  template <int TRIP>
  void launch(dim3 grid, int samples, int per_slice, const ProductList& pl, const uint8_t* volts) {
    image_samples<TRIP><<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, column_order_.data(), occupied_.data(),
                                                        entries_.data(), entry_first_.data(), entry_ends_.data(), a_row_,
                                                        image_.data());
  }

  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, occupied_max_ = 0, per_trip_ = 2, a_row_ = 0;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> column_order_, occupied_, entry_first_;
  core::DeviceArray<int2> entries_;
  core::DeviceArray<uint4> entry_ends_;
};

}  // namespace

StepInfo step_info() {
  return {"08_pol_pairs", "GPU, fused as 07, both polarizations of a cell side by side: one grid of float2 pairs",
          true, Accuracy::fp32,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Fused>(core::tunable(t, "slices")); }

}  // namespace epic
