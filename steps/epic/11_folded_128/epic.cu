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

constexpr int kN = 128;                // the image this step makes: 128 x 128
constexpr int kParts = 4;              // blocks per image, each a quarter of the rows
constexpr int kRows = kN / kParts;     // rows a block makes: 32
constexpr int kRow = kN + 1;           // a row of B in shared memory, padded: rows and columns both conflict-free
constexpr int kThreads = 512;

// A cell of both polarizations: re = (X.re, Y.re), im = (X.im, Y.im) (09's).
struct Pair {
  half2 re, im;
};

// e^{+2 pi i m / 128}, each part in both halves, made in double on the host and rounded once.
struct Twiddle {
  half2 cos, sin;  // 8 bytes: one constant load a twiddle
};
__constant__ Twiddle c_twiddle[kN];

__device__ __forceinline__ Pair add(Pair a, Pair b) { return {__hadd2(a.re, b.re), __hadd2(a.im, b.im)}; }
__device__ __forceinline__ Pair sub(Pair a, Pair b) { return {__hsub2(a.re, b.re), __hsub2(a.im, b.im)}; }
__device__ __forceinline__ Pair twiddle(Pair a, int m) {  // a e^{2 pi i m / 128}, both polarizations at once
  const Twiddle w = c_twiddle[m];
  const half2 c = w.cos, s = w.sin;
  return {__hfma2(a.re, c, __hneg2(__hmul2(a.im, s))), __hfma2(a.re, s, __hmul2(a.im, c))};
}

// 4-, 8- and 16-point inverse DFTs in registers, natural order: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(Pair& a0, Pair& a1, Pair& a2, Pair& a3) {
  const Pair t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const Pair t3 = {__hneg2(d.im), d.re};  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(Pair (&v)[8]) {
  Pair e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const half2 h = __float2half2_rn(0.70710678118654752f);  // e^{i pi/4} = h (1 + i)
  o1 = {__hmul2(h, __hsub2(o1.re, o1.im)), __hmul2(h, __hadd2(o1.re, o1.im))};
  o2 = {__hneg2(o2.im), o2.re};
  o3 = {__hneg2(__hmul2(h, __hadd2(o3.re, o3.im))), __hmul2(h, __hsub2(o3.re, o3.im))};
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}
__device__ __forceinline__ void dft16(Pair (&v)[16]) {  // two 8-point DFTs and e^{2 pi i k/16}
  Pair e[8], o[8];
#pragma unroll
  for (int n = 0; n < 8; ++n) e[n] = v[2 * n], o[n] = v[2 * n + 1];
  dft8(e);
  dft8(o);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    // e^{2 pi i k / 16} = e^{2 pi i 8k / 128}: 1 for k = 0, i for k = 4 (no multiply)
    const Pair t = k == 0 ? o[0] : k == 4 ? Pair{__hneg2(o[4].im), o[4].re} : twiddle(o[k], 8 * k);
    v[k] = add(e[k], t), v[k + 8] = sub(e[k], t);
  }
}

// The gather lists, folded, per (channel, part): for each occupied column and each of its 32
// folded cells, the (stand, complex weight) entries, the weight w e^{2 pi i y part / 128} of the
// cell's row y. Column round one gives thread (item, n2) the folded cells y0 = 8 n1 + n2 (n1 <
// 4) of its column; its entries lie in one run, and `ends` holds where each of the 4 cells'
// entries end (16 bits each).
struct Entry {
  int32_t stand;
  float re, im, unused;  // 16 bytes: one load
};
struct FoldedLists {
  std::vector<int32_t> column, occupied;  // (channel, 128) occupied columns first; (channel)
  std::vector<Entry> entry;
  std::vector<int32_t> first;  // (channel, part, occupied column, n2)
  std::vector<uint2> ends;     // (channel, part, occupied column, n2)
};
FoldedLists folded_lists(const Inputs& in) {
  const CellLists cl = make_cell_lists(in);
  const size_t nn = size_t(kN) * kN;
  FoldedLists l;
  occupied_columns_first(cl, in.channels, kN, l.column, l.occupied);  // 07's order: occupied first
  l.first.assign(size_t(in.channels) * kParts * kN * 8, 0);
  l.ends.assign(l.first.size(), make_uint2(0, 0));
  for (int c = 0; c < in.channels; ++c) {
    auto cell = [&](int y, int x) { return size_t(c) * nn + size_t(y) * kN + x; };
    const int occupied = l.occupied[size_t(c)];
    for (int part = 0; part < kParts; ++part)
      for (int ci = 0; ci < occupied; ++ci)
        for (int n2 = 0; n2 < 8; ++n2) {
          const size_t thread = ((size_t(c) * kParts + part) * kN + ci) * 8 + n2;
          const int x = l.column[size_t(c) * kN + ci];
          l.first[thread] = int32_t(l.entry.size());
          uint32_t end[4];
          for (int n1 = 0; n1 < 4; ++n1) {
            for (int y = 8 * n1 + n2; y < kN; y += kRows) {  // the rows folded onto cell 8 n1 + n2
              const std::complex<double> phase = std::polar(1.0, 2 * M_PI * double(y * part) / kN);
              for (int32_t e = cl.start[cell(y, x)]; e < cl.start[cell(y, x) + 1]; ++e) {
                const std::complex<double> w = double(cl.weight[size_t(e)]) * phase;
                l.entry.push_back({cl.stand[size_t(e)], float(w.real()), float(w.imag()), 0.f});
              }
            }
            end[n1] = uint32_t(l.entry.size() - size_t(l.first[thread]));  // <= 4 x 4 x 512 stands
          }
          l.ends[thread] = make_uint2(end[0] | end[1] << 16, end[2] | end[3] << 16);
        }
  }
  if (l.entry.empty()) l.entry.push_back({0, 0.f, 0.f, 0.f});  // never read; keeps the upload non-empty
  return l;
}

// Row round one (thread n2 of the row's eight), in place: the 16-point DFT over n1 of x = 8 n1 +
// n2 and the twiddle e^{2 pi i n2 k1 / 128}, written back at 8 k1 + n2. Element 8 n1 + n2 is read
// only where bit n1 of `occupied` is set (an empty column is zero, and B's copy of it stale).
__device__ __forceinline__ void row_round_one(Pair* line, int n2, unsigned occupied) {
  Pair v[16];
#pragma unroll
  for (int n1 = 0; n1 < 16; ++n1)
    v[n1] = occupied >> n1 & 1 ? line[8 * n1 + n2] : Pair{__float2half2_rn(0.f), __float2half2_rn(0.f)};
  dft16(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 16; ++k1) line[8 * k1 + n2] = twiddle(v[k1], n2 * k1);
}

// A block images one (channel, part, slice of the samples), in trips of two samples. Roles:
//   columns, round one: item i (i = lane, lane + 64, ...; lane = thread % 64) of the trip's
//     2 x occupied folded columns, thread n2 = thread / 64 of its eight: gathers the folded
//     cells 8 n1 + n2 (n1 < 4) in float, rounds them to pairs, a 4-point DFT, the twiddle
//     e^{2 pi i n2 k1 / 32}, into A at 8 k1 + n2;
//   columns, round two: item i, thread k1 < 4: the 8-point DFT of A's 8 k1 .. 8 k1 + 7, output
//     row j = k1 + 4 k2 of the sample's B, at the item's column;
//   rows, round one: (sample, row j = thread % 32, n2 = thread / 32 % 8): 16 x 8, in place;
//   rows, round two: (row j = thread % 32, k1 = thread / 32 < 16), each sample of the trip: the
//     8-point DFT of 8 k1 .. 8 k1 + 7, pixels (4 j + part, k1 + 16 k2), products summed.
// Three barriers a trip.
__global__ void __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ column_order, const int32_t* __restrict__ occupied_columns,
                  const Entry* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint2* __restrict__ entry_ends, int a_row, float* image) {
  constexpr int kTrip = 2, kB = kRows * kRow;
  extern __shared__ Pair shared[];
  Pair* const grid_b = shared;                     // kTrip x kRows padded rows
  Pair* const grid_a = shared + kTrip * kB;        // kRows x a_row items
  float4* const fields = reinterpret_cast<float4*>(grid_a + kRows * a_row);  // 2 trips x kTrip x stands
  const int c = blockIdx.x / kParts, part = blockIdx.x % kParts;
  const int first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int lane = threadIdx.x % 64, eighth = threadIdx.x / 64, pols = s.pols;
  const int sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;
  const int occupied = __ldg(occupied_columns + c);
  const int32_t* columns = column_order + size_t(c) * kN;
  // Rows: this thread's row and eighth; bit n1 of row_mask: column 8 n1 + n2 holds a stand.
  const int j = threadIdx.x % 32, row_n2 = threadIdx.x / 32 % 8, row_sample = threadIdx.x / 256, k1 = threadIdx.x / 32;
  unsigned row_mask = 0;
  for (int ci = 0; ci < occupied; ++ci) {
    const int x = __ldg(columns + ci);
    if (x % 8 == row_n2) row_mask |= 1u << (x / 8);
  }

  // Thread a fetches stand a's bytes of a trip's samples two trips ahead and stages them
  // decoded one trip ahead (07's).
  uint32_t ahead[kTrip] = {0, 0};
  auto fetch = [&](int t) {
#pragma unroll
    for (int k = 0; k < kTrip; ++k)
      if (int(threadIdx.x) < s.stands && t + k < last) {
        const uint8_t* b = channel_bytes + size_t(t + k) * sample_stride + threadIdx.x * pols;
        ahead[k] = pols > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
      }
  };
  auto stage = [&](int t) {
    float4* to = fields + ((t - first) / kTrip & 1) * kTrip * s.stands;
    if (int(threadIdx.x) < s.stands)
#pragma unroll
      for (int k = 0; k < kTrip; ++k) to[k * s.stands + threadIdx.x] = decode_stand(ahead[k], pols);
  };
  fetch(first);
  stage(first);
  fetch(first + kTrip);
  __syncthreads();

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (4 j + part, k1 + 16 k)
  for (int t = first; t < last; t += kTrip) {
    const int count = min(kTrip, last - t), items = count * occupied;  // samples, column transforms
    // Columns, round one: gather the four folded cells in float (complex weights), round each
    // to a pair of half2, a 4-point DFT and the twiddle.
    const float4* now = fields + ((t - first) / kTrip & 1) * kTrip * s.stands;
    for (int i = lane; i < items; i += 64) {
      const int sample = i >= occupied, ci = i - sample * occupied;
      const size_t thread = ((size_t(c) * kParts + part) * kN + ci) * 8 + eighth;
      const Entry* run = entries + __ldg(entry_first + thread);
      const uint2 ends = __ldg(entry_ends + thread);
      const float4* f_of = now + sample * s.stands;
      Pair v[4];
#pragma unroll
      for (int n1 = 0; n1 < 4; ++n1) {
        const int from = n1 > 0 ? cell_end(ends, n1 - 1) : 0, to = cell_end(ends, n1);
        float4 xy = make_float4(0, 0, 0, 0);  // X.re, X.im, Y.re, Y.im
        for (int e = from; e < to; ++e) {
          const Entry en = run[e];
          const float4 f = f_of[en.stand];
          xy.x += en.re * f.x - en.im * f.y, xy.y += en.re * f.y + en.im * f.x;
          xy.z += en.re * f.z - en.im * f.w, xy.w += en.re * f.w + en.im * f.z;
        }
        v[n1] = {__floats2half2_rn(xy.x, xy.z), __floats2half2_rn(xy.y, xy.w)};
      }
      dft4(v[0], v[1], v[2], v[3]);
#pragma unroll
      for (int q = 0; q < 4; ++q)  // e^{2 pi i n2 k1 / 32}, 1 for k1 = 0
        grid_a[(8 * q + eighth) * a_row + i] = q == 0 ? v[0] : twiddle(v[q], 4 * eighth * q);
    }
    if (t + kTrip < last) stage(t + kTrip);
    fetch(t + 2 * kTrip);
    __syncthreads();

    // Columns, round two (threads of eighth < 4): A's item -> its column of the sample's B.
    if (eighth < 4)
      for (int i = lane; i < items; i += 64) {
        const int sample = i >= occupied, x = __ldg(columns + i - sample * occupied);
        Pair v[8];
#pragma unroll
        for (int n2 = 0; n2 < 8; ++n2) v[n2] = grid_a[(8 * eighth + n2) * a_row + i];
        dft8(v);
#pragma unroll
        for (int k2 = 0; k2 < 8; ++k2) grid_b[sample * kB + (eighth + 4 * k2) * kRow + x] = v[k2];
      }
    __syncthreads();

    // Rows, round one, in place; round two into registers, then the products in float:
    // X = (re.x, im.x), Y = (re.y, im.y).
    if (row_sample < count) row_round_one(grid_b + row_sample * kB + j * kRow, row_n2, row_mask);
    __syncthreads();
    for (int sample = 0; sample < count; ++sample) {
      Pair v[8];
#pragma unroll
      for (int m = 0; m < 8; ++m) v[m] = grid_b[sample * kB + j * kRow + 8 * k1 + m];
      dft8(v);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float2 re = __half22float2(v[k].re), im = __half22float2(v[k].im);
        xx[k] = fmaf(re.x, re.x, fmaf(im.x, im.x, xx[k]));  // two fused multiply-adds a sum
        yy[k] = fmaf(re.y, re.y, fmaf(im.y, im.y, yy[k]));
        xy_re[k] = fmaf(re.x, re.y, fmaf(im.x, im.y, xy_re[k]));
        xy_im[k] = fmaf(im.x, re.y, fmaf(-re.x, im.y, xy_im[k]));
      }
    }
  }

  // The products of the slice, added to the image (zeroed once a run), as 05.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int jy = kParts * j + part, jx = k1 + 16 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

class Folded final : public GpuStep {
 public:
  explicit Folded(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("11_folded_128 images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 05_fused's to 09_fused_half's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("11_folded_128 decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const FoldedLists lists = folded_lists(in);
    column_order_.upload(lists.column.data(), lists.column.size());
    occupied_.upload(lists.occupied.data(), lists.occupied.size());
    entries_.upload(lists.entry.data(), lists.entry.size());
    entry_first_.upload(lists.first.data(), lists.first.size());
    entry_ends_.upload(lists.ends.data(), lists.ends.size());
    occupied_max_ = *std::max_element(lists.occupied.begin(), lists.occupied.end());

    Twiddle twiddles[kN];
    for (int m = 0; m < kN; ++m) {
      const double phase = 2 * M_PI * m / kN;
      twiddles[m] = {__float2half2_rn(float(std::cos(phase))), __float2half2_rn(float(std::sin(phase)))};
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_twiddle, twiddles, sizeof(twiddles)));

    // Shared memory per block: two samples' 32 padded rows of pairs, A (32 rows of an item per
    // occupied column and sample), two trips' decoded fields: 96,512 bytes with 28 occupied
    // columns and 256 stands.
    a_row_ = 2 * occupied_max_;
    smem_ = (2 * size_t(kRows) * kRow + size_t(kRows) * a_row_) * sizeof(Pair) + 4 * size_t(in.stands) * sizeof(float4);
    const void* kernel = (const void*)image_samples;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    const int images = in.channels * kParts;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + images - 1) / images;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(unsigned(in_.channels * kParts), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      image_samples<<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, column_order_.data(), occupied_.data(),
                                               entries_.data(), entry_first_.data(), entry_ends_.data(), a_row_,
                                               image_.data());
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
    params.set("slices", slices_used_);  // blocks per (channel, part)
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("occupied_columns_max", occupied_max_);  // of kN, in the busiest channel
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, occupied_max_ = 0, a_row_ = 0;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> column_order_, occupied_, entry_first_;
  core::DeviceArray<Entry> entries_;
  core::DeviceArray<uint2> entry_ends_;
};

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
