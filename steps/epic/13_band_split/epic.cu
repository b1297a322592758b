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

constexpr int kN = 64;            // the image this step makes: 64 x 64 (128 x 128 is 10's)
constexpr int kRow = kN + 1;      // a grid row in shared memory, padded: rows and columns both conflict-free
constexpr int kThreads = kN * 8;  // a thread per (row or column, eighth): 512

// A cell of both polarizations: re = (X.re, Y.re), im = (X.im, Y.im).
struct Pair {
  half2 re, im;
};

// e^{+2 pi i m / 64}, each part in both halves: the inverse transform's twiddles, made in
// double on the host and rounded once.
struct Twiddle {
  half2 cos, sin;  // 8 bytes: one constant load a twiddle
};
__constant__ Twiddle c_twiddle[kN];

__device__ __forceinline__ Pair add(Pair a, Pair b) { return {__hadd2(a.re, b.re), __hadd2(a.im, b.im)}; }
__device__ __forceinline__ Pair sub(Pair a, Pair b) { return {__hsub2(a.re, b.re), __hsub2(a.im, b.im)}; }
__device__ __forceinline__ Pair twiddle(Pair a, int m) {  // a e^{2 pi i m / 64}, both polarizations at once
  const Twiddle w = c_twiddle[m];
  const half2 c = w.cos, s = w.sin;
  return {__hfma2(a.re, c, __hneg2(__hmul2(a.im, s))), __hfma2(a.re, s, __hmul2(a.im, c))};
}

// 4- and 8-point inverse DFTs in registers, natural order in and out: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
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
    v[n1] = occupied >> n1 & 1 ? line[8 * n1 + n2] : Pair{__float2half2_rn(0.f), __float2half2_rn(0.f)};
  dft8(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 8; ++k1) line[8 * k1 + n2] = twiddle(v[k1], n2 * k1);
}

// 07's kernel with a grid of pairs: one holds both polarizations (with one polarization, Y is
// zero), so the kernel no longer depends on their number. The same trips, always of two
// samples (half the bytes of 07's grids: two fit in shared memory whatever the aperture, at
// most 164 KB), occupied columns shared among the threads, three barriers a trip. kMinBlocks: the blocks an
// SM must hold at once (--min-blocks), which caps the registers a thread may use (65,536 per
// SM: 128 for one block of 512 threads, 64 for two, at the cost of spilled values).
template <int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ column_order, const int32_t* __restrict__ occupied_columns,
                  const int2* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint4* __restrict__ entry_ends, int a_row, float* image) {
  constexpr int TRIP = 2, kGrid = kN * kRow;
  extern __shared__ Pair shared[];
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
    // Columns, round one: gather the eight cells in float, round each to a pair of half2.
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
        v[n1] = {__floats2half2_rn(xy.x, xy.z), __floats2half2_rn(xy.y, xy.w)};
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

    // Rows, round one, in place; round two into registers, then the products in float:
    // X = (re.x, im.x), Y = (re.y, im.y).
    for (int g = 0; g < count; ++g) round_one(grid_b + g * kGrid + lane * kRow, eighth, row_mask);
    __syncthreads();
    for (int sample = 0; sample < count; ++sample) {
      Pair v[8];
      round_two(grid_b + sample * kGrid + lane * kRow, 1, eighth, v);
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
    const int jy = lane, jx = eighth + 8 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

// Rank r's share of a band of C channels: a contiguous group, C / R channels and one more for
// each of the first C % R ranks (132 channels on 8 GPUs: 17, 17, 17, 17, 16, 16, 16, 16).
struct Group {
  int first, count;
};
Group group_of(int rank, int ranks, int channels) {
  const int each = channels / ranks, extra = channels % ranks;
  return {rank * each + std::min(rank, extra), each + (rank < extra ? 1 : 0)};
}

class Fused final : public GpuStep {
 public:
  Fused(long slices, long min_blocks) : slices_(int(slices)), min_blocks_(int(min_blocks)) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&gather_stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&imaged_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&gathered_, cudaEventDisableTiming));
  }
  Fused(const Fused&) = delete;
  Fused& operator=(const Fused&) = delete;
  ~Fused() override {
    cudaEventDestroy(imaged_);
    cudaEventDestroy(gathered_);
    cudaStreamDestroy(gather_stream_);
  }

  void load(const Inputs& band) override {
    const core::Ranks& world = core::ranks();
    if (world.size > band.channels)
      throw core::UsageError("13_band_split: " + std::to_string(world.size) + " ranks for " + std::to_string(band.channels) +
                             " channels: each GPU images at least one (--channels " + std::to_string(world.size) +
                             " or more, or fewer ranks)");
    band_channels_ = band.channels;
    group_ = group_of(world.rank, world.size, band.channels);
    const Inputs& in = channel_group_.select(band, group_.first, group_.count);  // what the F-engine sends this GPU
    if (in.image_size != kN)
      throw core::UsageError("13_band_split images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 10_cluster_128's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("13_band_split decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const ColumnLists lists = column_lists(in);  // 02's lists, a thread's run after another's
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

    // Shared memory per block: two samples' padded grids of pairs, A (a column per item of the
    // busiest channel: 56 for LWA-SV at 38 MHz), and two trips' decoded fields (111,616 bytes
    // with 28 occupied columns and 256 stands; at most 164 KB, 64 columns and 512 stands).
    int device = 0, sms = 0, per_sm = 0, most = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    a_row_ = 2 * occupied_max_;
    smem_ = (2 * size_t(kN) * kRow + size_t(kN) * a_row_) * sizeof(Pair) + 4 * size_t(in.stands) * sizeof(float4);
    if (smem_ > size_t(most))
      throw core::UsageError("13_band_split needs " + std::to_string(smem_) + " bytes of shared memory a block for " +
                             std::to_string(occupied_max_) + " occupied columns and " + std::to_string(in.stands) +
                             " stands; this GPU gives a block at most " + std::to_string(most));
    const void* kernel = min_blocks_ > 1 ? (const void*)image_samples<2> : (const void*)image_samples<1>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + in.channels - 1) / in.channels;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);

    whole_.resize(band.image_values());  // the band's image, every rank's after the gather
    comm_ = core::world_communicator();   // the first call waits for every rank
    // The ranks leave load() together, so that each run's clock starts on every GPU at once:
    // rank 0's time is then the band's, not also the wait for a rank that started late.
    const int32_t one = 1;
    ready_.upload(&one, 1);
    NCCL_CHECK(ncclAllReduce(ready_.data(), ready_.data(), 1, ncclInt32, ncclSum, comm_, gather_stream_));
    CUDA_CHECK(cudaStreamSynchronize(gather_stream_));
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
      min_blocks_ > 1 ? launch<2>(grid, samples, per_slice, pl, volts) : launch<1>(grid, samples, per_slice, pl, volts);
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
    gather();
  }

  void store(float* image) override {
    whole_.download(image);
    keep_phases();
  }

  void describe(core::Fields& params) const override {
    params.set("slices", slices_used_);  // blocks per channel
    params.set("group_channels", group_.count);  // rank 0's group: the most channels a GPU images
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("samples_per_trip", 2);
    params.set("occupied_columns_max", occupied_max_);  // of kN, in the busiest channel
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  template <int kMinBlocks>
  void launch(dim3 grid, int samples, int per_slice, const ProductList& pl, const uint8_t* volts) {
    image_samples<kMinBlocks><<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, column_order_.data(), occupied_.data(),
                                                        entries_.data(), entry_first_.data(), entry_ends_.data(), a_row_,
                                                        image_.data());
  }

  // The group's finished image (image_, its planes of group_.count channels) into every
  // rank's image of the band (whole_, (plane, channel, m, l)). In each plane, rank r's channels
  // are one contiguous run from channel group_of(r).first: rank r broadcasts it, and all the
  // broadcasts go in one NCCL group. (ncclAllGather puts equal counts at offsets in rank order:
  // a plane's groups only where R divides C.) On a stream of its own, ordered by events.
  void gather() {
    const core::Ranks& world = core::ranks();
    const size_t nn = size_t(kN) * kN;
    CUDA_CHECK(cudaEventRecord(imaged_));  // after finish, on the default stream
    CUDA_CHECK(cudaStreamWaitEvent(gather_stream_, imaged_, 0));
    timer_.begin("gather", gather_stream_);
    NCCL_CHECK(ncclGroupStart());
    for (int q = 0; q < in_.planes; ++q)
      for (int r = 0; r < world.size; ++r) {
        const Group g = group_of(r, world.size, band_channels_);
        float* to = whole_.data() + (size_t(q) * band_channels_ + size_t(g.first)) * nn;
        const float* from = r == world.rank ? image_.data() + size_t(q) * size_t(g.count) * nn : to;
        NCCL_CHECK(ncclBroadcast(from, to, size_t(g.count) * nn, ncclFloat32, r, comm_, gather_stream_));
      }
    NCCL_CHECK(ncclGroupEnd());
    timer_.end();
    CUDA_CHECK(cudaEventRecord(gathered_, gather_stream_));
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, gathered_, 0));  // the harness's clock stops after it
  }

  int slices_, min_blocks_, slices_used_ = 1, blocks_per_sm_ = 0, occupied_max_ = 0, a_row_ = 0;
  size_t smem_ = 0;
  int band_channels_ = 0;
  Group group_{0, 0};          // this rank's channels
  ChannelGroup channel_group_;  // their inputs: the plan's, the weights' and the voltages' share
  ncclComm_t comm_ = nullptr;
  cudaStream_t gather_stream_{};
  cudaEvent_t imaged_{}, gathered_{};
  core::DeviceArray<float> whole_;
  core::DeviceArray<int32_t> ready_;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> column_order_, occupied_, entry_first_;
  core::DeviceArray<int2> entries_;
  core::DeviceArray<uint4> entry_ends_;
};

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
