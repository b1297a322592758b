// What the EPIC GPU steps share and do not teach: the product list as a kernel argument, the
// voltages' way to the GPU a gulp at a time (pinned host memory, two device buffers, a copy
// stream: 04's, kept by every later step, its copies timed by core's PhaseTimer; a group of the
// band's channels as the inputs of one GPU, for a step that splits the band), and the two
// kernels that every GPU step runs the same way: the stands' autocorrelations and, after the
// last gulp, their removal and the grid correction.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/cufft_check.cuh"
#include "core/device_array.cuh"
#include "core/error.hpp"
#include "core/timing.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {

// The products as a kernel argument.
struct ProductList {
  int count = 0;
  int kind[5] = {0, 0, 0, 0, 0};  // Product values
  int plane[5] = {0, 0, 0, 0, 0}; // first plane of each product
};
inline ProductList product_list(const Inputs& in) {
  ProductList p;
  p.count = in.product_count;
  int plane = 0;
  for (int k = 0; k < in.product_count; ++k) {
    p.kind[k] = int(in.products[k]);
    p.plane[k] = plane;
    plane += is_complex(in.products[k]) ? 2 : 1;
  }
  return p;
}

// The F-engine's bytes of one gulp: samples_per_gulp x channels x stands x pols.
inline size_t gulp_bytes(const Inputs& in) { return size_t(in.channels) * in.stands * in.pols * in.samples_per_gulp; }

// The F-engine's bytes of every gulp in pinned host memory, copied once per source: a copy
// from pageable memory would be staged through a pinned buffer by the driver, and serialized.
class PinnedVoltages {
 public:
  void load(const Inputs& in) {
    if (source_ == in.voltages) return;
    bytes_.resize(gulp_bytes(in) * in.gulps);
    std::memcpy(bytes_.data(), in.voltages, gulp_bytes(in) * in.gulps);
    source_ = in.voltages;
  }
  const uint8_t* data() { return bytes_.data(); }

 private:
  const uint8_t* source_ = nullptr;  // what bytes_ is a copy of
  core::PinnedArray<uint8_t> bytes_;
};

// A contiguous group of the band's channels, first .. first + count - 1, as a problem of its own:
// the inputs of a GPU that the F-engine sends only those channels (13_band_split, a group a GPU).
// The gridding plan and the kernel weights are the band's from the group's first channel on; the
// voltages are the group's bytes alone, (time, channel of the group, stand, pol), copied out of
// the band's once per source and group (host work in load(), as the pinned copy is). The whole
// band is the band's own inputs: nothing is copied.
class ChannelGroup {
 public:
  const Inputs& select(const Inputs& band, int first, int count) {
    if (first < 0 || count < 1 || first + count > band.channels)
      throw std::logic_error("ChannelGroup: channels " + std::to_string(first) + " + " + std::to_string(count) +
                             " outside the band's " + std::to_string(band.channels));
    group_ = band;
    if (first == 0 && count == band.channels) return group_;
    const size_t row = size_t(band.stands) * band.pols;  // one channel's bytes of a sample
    const size_t samples = size_t(band.samples_per_gulp) * band.gulps;
    if (source_ != band.voltages || first_ != first || count_ != count) {
      bytes_.resize(samples * count * row);
      for (size_t t = 0; t < samples; ++t)
        std::memcpy(bytes_.data() + t * count * row, band.voltages + (t * band.channels + first) * row, count * row);
      source_ = band.voltages, first_ = first, count_ = count;
    }
    const size_t plan = size_t(first) * band.stands;  // (channel, stand)
    group_.channels = count;
    group_.voltages = bytes_.data();
    group_.cell_x += plan, group_.cell_y += plan;
    group_.weight_x += plan * band.support, group_.weight_y += plan * band.support;
    return group_;
  }

 private:
  Inputs group_{};
  std::vector<uint8_t> bytes_;
  const uint8_t* source_ = nullptr;  // the band's voltages that bytes_ holds a group of
  int first_ = -1, count_ = 0;
};

// Before allocating: `need` bytes must fit in 90 % of the device memory free now, else the
// problem is too large for this GPU, bad usage (exit 2) whose message names what needs the
// memory and what to change, not a failed allocation.
inline void require_device_memory(size_t need, const std::string& what, const std::string& advice) {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need > free / 10 * 9)
    throw core::UsageError(what + " needs " + std::to_string(need >> 20) + " MiB of device memory; " +
                           std::to_string(free >> 20) + " MiB are free: " + advice);
}

// cuFFT's batched inverse 2D transforms of n x n grids, in place, a plan per (n, batch) made on
// first use and kept (a step may need a gulp's batches and its remainder). 64-bit sizes: a gulp
// of 128 x 128 grids passes 2^31 elements. The work area is the plan's own, allocated by cuFFT.
class GridFfts {
 public:
  GridFfts() = default;
  GridFfts(const GridFfts&) = delete;
  GridFfts& operator=(const GridFfts&) = delete;
  ~GridFfts() {
    for (auto& [shape, plan] : plans_) cufftDestroy(plan);
  }
  // The work area a plan for `transforms` grids would take: known before the plan is made.
  static size_t work_bytes(int n, long long transforms) {
    cufftHandle probe;
    CUFFT_CHECK(cufftCreate(&probe));
    long long dims[2] = {n, n}, nn = 1LL * n * n;
    size_t work = 0;
    CUFFT_CHECK(cufftGetSizeMany64(probe, 2, dims, nullptr, 1, nn, nullptr, 1, nn, CUFFT_C2C, transforms, &work));
    cufftDestroy(probe);
    return work;
  }
  void inverse(cufftComplex* grids, int n, long long transforms) {
    auto found = plans_.find({n, transforms});
    if (found == plans_.end()) {
      long long dims[2] = {n, n}, nn = 1LL * n * n;
      size_t work = 0;
      cufftHandle plan;
      CUFFT_CHECK(cufftCreate(&plan));
      found = plans_.emplace(std::make_pair(n, transforms), plan).first;  // destroyed with the others, made or not
      CUFFT_CHECK(cufftMakePlanMany64(plan, 2, dims, nullptr, 1, nn, nullptr, 1, nn, CUFFT_C2C, transforms, &work));
    }
    CUFFT_CHECK(cufftExecC2C(found->second, grids, grids, CUFFT_INVERSE));
  }

 private:
  std::map<std::pair<int, long long>, cufftHandle> plans_;
};

// The voltages on their way to the GPU, a gulp at a time, double buffered: gulp g goes to
// device buffer g % 2 on a stream of its own, so gulp g + 1's copy runs while gulp g's kernels
// (on the default stream) read the other buffer. Two events a buffer order the streams:
// `copied`, recorded after the copy, which the kernels wait for; `consumed`, recorded after the
// last kernel that reads the buffer, which the next copy into it (gulp g + 2) waits for, so
// that a buffer is never overwritten while it is still read. Per gulp, in the step's loop:
//   copy(g + 1, timer)                    the next gulp's bytes, beside this gulp's work
//   volts = wait(g)                       kernels queued after this read gulp g's bytes at volts
//   ... the gulp's kernels ...
//   consumed(g)                           buffer g % 2 may take gulp g + 2
// with copy(0, timer) before the first gulp.
class GulpStream {
 public:
  GulpStream() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));  // not synchronized with stream 0
    for (int k = 0; k < 2; ++k) {
      CUDA_CHECK(cudaEventCreateWithFlags(&copied_[k], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&consumed_[k], cudaEventDisableTiming));
    }
  }
  GulpStream(const GulpStream&) = delete;
  GulpStream& operator=(const GulpStream&) = delete;
  ~GulpStream() {
    for (int k = 0; k < 2; ++k) {
      cudaEventDestroy(copied_[k]);
      cudaEventDestroy(consumed_[k]);
    }
    cudaStreamDestroy(copy_stream_);
  }

  // The F-engine's bytes in pinned memory and the two device buffers sized to a gulp.
  void load(const Inputs& in) {
    pinned_.load(in);
    for (auto& b : buffer_) b.resize(gulp_bytes(in));
  }

  // Gulp g's bytes into buffer g % 2 on the copy stream, once the kernels that last read that
  // buffer (gulp g - 2) have run; the timer's "copy" phase, on the copy stream.
  void copy(int g, core::PhaseTimer& timer) {
    const int k = g % 2;
    const size_t bytes = buffer_[k].size();
    timer.begin("copy", copy_stream_);
    CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, consumed_[k], 0));
    CUDA_CHECK(cudaMemcpyAsync(buffer_[k].data(), pinned_.data() + size_t(g) * bytes, bytes, cudaMemcpyHostToDevice, copy_stream_));
    CUDA_CHECK(cudaEventRecord(copied_[k], copy_stream_));
    timer.end();
  }

  // The default stream waits for gulp g's copy; the kernels queued after this call may read
  // the returned bytes until consumed(g).
  const uint8_t* wait(int g) {
    const int k = g % 2;
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, copied_[k], 0));
    return buffer_[k].data();
  }

  // After the last kernel that reads gulp g's bytes (queued on the default stream): the
  // buffer may take gulp g + 2.
  void consumed(int g) { CUDA_CHECK(cudaEventRecord(consumed_[g % 2])); }

 private:
  cudaStream_t copy_stream_{};
  cudaEvent_t copied_[2]{}, consumed_[2]{};
  PinnedVoltages pinned_;
  core::DeviceArray<uint8_t> buffer_[2];
};

// The image's shape as the kernels take it.
struct Shape {
  int n, support, stands, channels, pols, planes;
};

// For each (channel, cell), the stands whose S x S support covers it and their weights, in
// stand order, as compressed rows: start has channels * N * N + 1 entries, and cell (c, y, x)'s
// entries are start[(c N + y) N + x] .. start[... + 1] - 1. Made once in load(): gathering a cell
// from its list writes it once, with no atomics.
struct CellLists {
  std::vector<int32_t> start, stand;
  std::vector<float> weight;
};
inline CellLists make_cell_lists(const Inputs& in) {
  const int n = in.image_size, mask = n - 1, S = in.support;
  const size_t nn = size_t(n) * n, lists = size_t(in.channels) * nn;
  CellLists l;
  l.start.assign(lists + 1, 0);
  auto cell_of = [&](int c, int a, int iy, int ix) {
    const size_t plan = size_t(c) * in.stands + a;
    return size_t(c) * nn + size_t((in.cell_y[plan] + iy) & mask) * n + ((in.cell_x[plan] + ix) & mask);
  };
  for (int c = 0; c < in.channels; ++c)
    for (int a = 0; a < in.stands; ++a)
      for (int iy = 0; iy < S; ++iy)
        for (int ix = 0; ix < S; ++ix) ++l.start[cell_of(c, a, iy, ix) + 1];
  for (size_t k = 0; k < lists; ++k) l.start[k + 1] += l.start[k];
  std::vector<int32_t> fill(l.start.begin(), l.start.end() - 1);
  l.stand.resize(size_t(l.start[lists]));
  l.weight.resize(size_t(l.start[lists]));
  for (int c = 0; c < in.channels; ++c)
    for (int a = 0; a < in.stands; ++a)
      for (int iy = 0; iy < S; ++iy)
        for (int ix = 0; ix < S; ++ix) {
          const size_t plan = size_t(c) * in.stands + a;
          const int32_t e = fill[cell_of(c, a, iy, ix)]++;
          l.stand[size_t(e)] = a;
          l.weight[size_t(e)] = in.weight_y[plan * S + iy] * in.weight_x[plan * S + ix];
        }
  return l;
}

// 02's lists with each (stand, weight) entry packed in 8 bytes, one load a cell's entry: the
// weight's float bits beside the stand (10's gather reads them from global memory).
inline std::vector<int2> packed_entries(const CellLists& l) {
  std::vector<int2> entry(l.stand.size());
  for (size_t e = 0; e < entry.size(); ++e) {
    int32_t w;
    std::memcpy(&w, &l.weight[e], sizeof w);
    entry[e] = make_int2(l.stand[e], w);
  }
  return entry;
}

// Each channel's grid columns, those that hold a stand under its support first, then the
// empty ones (a permutation of 0 .. n - 1 per channel, appended to `column`), and how many are
// occupied (`occupied`, per channel). A column with no stand is zero, and so is its transform.
inline void occupied_columns_first(const CellLists& cl, int channels, int n, std::vector<int32_t>& column,
                                   std::vector<int32_t>& occupied) {
  const size_t nn = size_t(n) * n;
  occupied.assign(size_t(channels), 0);
  std::vector<char> used(static_cast<size_t>(n), 0);
  for (int c = 0; c < channels; ++c) {
    std::fill(used.begin(), used.end(), 0);
    for (size_t k = size_t(c) * nn; k < size_t(c + 1) * nn; ++k)
      if (cl.start[k + 1] > cl.start[k]) used[k % size_t(n)] = 1;
    for (int pass = 1; pass >= 0; --pass)
      for (int x = 0; x < n; ++x)
        if (used[size_t(x)] == pass) column.push_back(x);
    occupied[size_t(c)] = int32_t(std::count(used.begin(), used.end(), 1));
  }
}

// The gather lists of the fused 64 x 64 steps (05-08), arranged for the thread that uses them.
// Their column pass gives thread (lane, eighth) of a channel's block the 8 cells of rows
// eighth, eighth + 8, ..., eighth + 56 of one column. Each channel's columns are ordered
// occupied first (a column that holds a stand under its support; LWA-SV's 88 m of east-west
// aperture covers 24-28 of 64 at 38-41 MHz), then empty: a column with no stand is zero, and so
// is its transform, so the steps transform only the occupied ones, and their row pass reads
// only those columns' cells. The (stand, weight) entries
// of a thread's 8 cells lie in one run, cell after cell: a thread reads where its run starts
// and where each cell ends (8 x 16 bits: at most 8 x 512 entries) instead of 16 list bounds.
struct ColumnLists {
  std::vector<int32_t> column;    // (channel, lane): the grid column of lane, occupied first
  std::vector<int32_t> occupied;  // (channel): how many columns hold a stand
  std::vector<int2> entry;        // (stand, the weight's float bits)
  std::vector<int32_t> first;     // (channel, lane, eighth): the thread's first entry
  std::vector<uint4> ends;        // (channel, lane, eighth): its cells' ends from `first`, 16 bits each
};
// With occupied_only false (05, which transforms every column) the columns keep their natural
// order and every one counts as occupied.
inline ColumnLists column_lists(const Inputs& in, bool occupied_only = true) {
  constexpr int n = 64, cells = n / 8;  // 8 cells a thread
  if (in.image_size != n) throw std::logic_error("column_lists: the fused steps image 64 x 64");
  const CellLists cl = make_cell_lists(in);
  const size_t nn = size_t(n) * n;
  ColumnLists l;
  occupied_columns_first(cl, in.channels, n, l.column, l.occupied);
  if (!occupied_only)
    for (int c = 0; c < in.channels; ++c) {
      std::iota(l.column.begin() + size_t(c) * n, l.column.begin() + size_t(c + 1) * n, 0);
      l.occupied[size_t(c)] = n;
    }
  l.first.assign(size_t(in.channels) * n * 8, 0);
  l.ends.assign(size_t(in.channels) * n * 8, make_uint4(0, 0, 0, 0));
  for (int c = 0; c < in.channels; ++c) {
    auto cell = [&](int y, int x) { return size_t(c) * nn + size_t(y) * n + x; };
    for (int lane = 0; lane < l.occupied[size_t(c)]; ++lane)
      for (int eighth = 0; eighth < 8; ++eighth) {
        const size_t thread = (size_t(c) * n + lane) * 8 + eighth;
        const int x = l.column[size_t(c) * n + lane];
        l.first[thread] = int32_t(l.entry.size());
        uint32_t end[cells];
        for (int n1 = 0; n1 < cells; ++n1) {
          const size_t k = cell(8 * n1 + eighth, x);
          for (int32_t e = cl.start[k]; e < cl.start[k + 1]; ++e) {
            int32_t w;
            std::memcpy(&w, &cl.weight[size_t(e)], sizeof w);
            l.entry.push_back(make_int2(cl.stand[size_t(e)], w));
          }
          end[n1] = uint32_t(l.entry.size() - size_t(l.first[thread]));  // <= 8 x 512 stands
        }
        l.ends[thread] = make_uint4(end[0] | end[1] << 16, end[2] | end[3] << 16, end[4] | end[5] << 16, end[6] | end[7] << 16);
      }
  }
  if (l.entry.empty()) l.entry.push_back(make_int2(0, 0));  // never read; keeps the upload non-empty
  return l;
}
// Where cell n1 of a thread's run ends, from the packed `ends` (16 bits a cell): 8 cells in a
// uint4 (05-09), 4 in a uint2 (11's folded cells).
__device__ __forceinline__ int cell_end(const uint4& ends, int n1) {
  const uint32_t w = n1 < 2 ? ends.x : n1 < 4 ? ends.y : n1 < 6 ? ends.z : ends.w;
  return int(n1 & 1 ? w >> 16 : w & 0xffff);
}
__device__ __forceinline__ int cell_end(const uint2& ends, int n1) {
  const uint32_t w = n1 < 2 ? ends.x : ends.y;
  return int(n1 & 1 ? w >> 16 : w & 0xffff);
}

// A stand's two voltages decoded once a sample, for every cell it is gridded into:
// (X.re, X.im, Y.re, Y.im), exact in float; Y is zero with one polarization. `bytes` holds the
// stand's bytes as they lie in memory, X first.
__device__ __forceinline__ float4 decode_stand(uint32_t bytes, int pols) {
  const uint8_t x = uint8_t(bytes), y = uint8_t(bytes >> 8);
  return make_float4(float(nibble_re(x)), float(nibble_im(x)), pols > 1 ? float(nibble_re(y)) : 0.f,
                     pols > 1 ? float(nibble_im(y)) : 0.f);
}

// The fused steps' end of a slice: one pixel's four sums over the slice's samples (|X|^2,
// |Y|^2, Re and Im of X conj(Y)) added to each product plane of channel c at `pixel` (image
// order, zenith at the centre). The image is zeroed once a run; a channel's slices add into
// the same pixels, hence atomics.
__device__ __forceinline__ void add_pixel_sums(float* image, const Shape& s, const ProductList& pl, int c, size_t pixel,
                                               float xx, float yy, float xy_re, float xy_im) {
  const size_t nn = size_t(s.n) * s.n;
  for (int q = 0; q < pl.count; ++q) {
    float* o = image + (size_t(pl.plane[q]) * s.channels + c) * nn + pixel;
    switch (Product(pl.kind[q])) {
      case Product::XX: atomicAdd(o, xx); break;
      case Product::YY: atomicAdd(o, yy); break;
      case Product::I: atomicAdd(o, xx + yy); break;
      case Product::XY: atomicAdd(o, xy_re), atomicAdd(o + s.channels * nn, xy_im); break;
      case Product::YX: atomicAdd(o, xy_re), atomicAdd(o + s.channels * nn, -xy_im); break;
    }
  }
}

inline int blocks(size_t threads, int per_block) { return int((threads + per_block - 1) / per_block); }

// Each stand's autocorrelations over the batch, exact in integers: xx, yy, Re and Im of x conj(y).
static __global__ void accumulate_autos(Shape s, int batch, bool assign, const uint8_t* __restrict__ volts, int4* autos) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // (channel, stand)
  if (i >= s.channels * s.stands) return;
  int4 sum = assign ? make_int4(0, 0, 0, 0) : autos[i];  // the first gulp assigns: no memset
  for (int t = 0; t < batch; ++t) {
    const uint8_t* b = volts + (size_t(t) * s.channels * s.stands + i) * s.pols;
    const int xr = nibble_re(b[0]), xi = nibble_im(b[0]);
    sum.x += xr * xr + xi * xi;
    if (s.pols > 1) {
      const int yr = nibble_re(b[1]), yi = nibble_im(b[1]);
      sum.y += yr * yr + yi * yi;
      sum.z += xr * yr + xi * yi;
      sum.w += xi * yr - xr * yi;
    }
  }
  autos[i] = sum;
}

// After the last gulp: image -= sum_a P_a |X_a(l)|^2 |Y_a(m)|^2 (with --no-autos), then the grid
// correction. |X_a(l)|^2 = |sum_s w_s exp(2 pi i s (l - N/2) / N)|^2 needs only the weights.
static __global__ void finish_image(Shape s, ProductList pl, bool remove_autos, const int4* __restrict__ autos,
                             const float* __restrict__ weight_x, const float* __restrict__ weight_y,
                             const float* __restrict__ correction, float* image) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (channel, pixel)
  if (i >= size_t(s.channels) * nn) return;
  const int c = int(i / nn);
  const int l = int(i % nn % s.n), m = int(i % nn / s.n);
  float sub[7] = {0, 0, 0, 0, 0, 0, 0};  // at most 7 planes: XX, YY, XY* (2), YX* (2), I
  if (remove_autos) {
    float sl, cl, sm, cm;
    for (int a = 0; a < s.stands; ++a) {
      const size_t plan = size_t(c) * s.stands + a;
      float xr = 0, xi = 0, yr = 0, yi = 0;
      for (int k = 0; k < s.support; ++k) {
        sincospif(2.0f * float(k * (l - s.n / 2)) / float(s.n), &sl, &cl);
        sincospif(2.0f * float(k * (m - s.n / 2)) / float(s.n), &sm, &cm);
        xr += weight_x[plan * s.support + k] * cl, xi += weight_x[plan * s.support + k] * sl;
        yr += weight_y[plan * s.support + k] * cm, yi += weight_y[plan * s.support + k] * sm;
      }
      const float beam = (xr * xr + xi * xi) * (yr * yr + yi * yi);
      const int4 p = autos[plan];
      for (int k = 0; k < pl.count; ++k) {
        float* o = sub + pl.plane[k];
        switch (Product(pl.kind[k])) {
          case Product::XX: o[0] += float(p.x) * beam; break;
          case Product::YY: o[0] += float(p.y) * beam; break;
          case Product::I: o[0] += float(p.x + p.y) * beam; break;
          case Product::XY: o[0] += float(p.z) * beam, o[1] += float(p.w) * beam; break;
          case Product::YX: o[0] += float(p.z) * beam, o[1] -= float(p.w) * beam; break;
        }
      }
    }
  }
  const float g = correction[m] * correction[l];
  for (int q = 0; q < s.planes; ++q) {
    float& v = image[(size_t(q) * s.channels + c) * nn + i % nn];
    v = (v - sub[q]) * g;
  }
}


// What every GPU step holds and does the same way around its own kernels: the inputs kept for
// compute(), the image and the stands' autocorrelations on the device with what `finish`
// needs (the kernel weights and the grid correction), the phase timer, store(), and the
// record's phase breakdown (ms per gulp; a copy on its own stream runs beside the others).
// A step derives from it, calls load_image(in) in load() and finish(...) after its last gulp.
class GpuStep : public Step {
 public:
  void store(float* image) override {
    image_.download(image);
    keep_phases();
  }
  void describe(core::Fields& params) const override {
    core::Fields phases = params.object("phase_ms_per_gulp");
    for (const auto& [name, ms] : phase_ms_) phases.set(name, ms / in_.gulps);
  }

 protected:
  void load_image(const Inputs& in) {
    in_ = in;
    s_ = {in.image_size, in.support, in.stands, in.channels, in.pols, in.planes};
    image_.resize(in.image_values());
    autos_.resize(size_t(in.channels) * in.stands);
    weight_x_.upload(in.weight_x, size_t(in.channels) * in.stands * in.support);
    weight_y_.upload(in.weight_y, size_t(in.channels) * in.stands * in.support);
    correction_.upload(in.correction, size_t(in.image_size));
  }
  // After the last gulp, the "finish" phase: the autocorrelations removed (--no-autos), the
  // grid correction applied.
  void finish(const ProductList& pl, int threads) {
    timer_.begin("finish");
    finish_image<<<blocks(size_t(in_.channels) * in_.image_size * in_.image_size, threads), threads>>>(
        s_, pl, in_.remove_autos, autos_.data(), weight_x_.data(), weight_y_.data(), correction_.data(), image_.data());
    CUDA_CHECK_LAUNCH();
    timer_.end();
  }

  // The last run's phase times, for describe(): store() keeps them, and so does the store() of a
  // step whose output is another array than image_ (13_band_split's band, gathered from groups).
  void keep_phases() { phase_ms_ = timer_.totals(); }

  Inputs in_{};
  Shape s_{};
  core::DeviceArray<float> image_, weight_x_, weight_y_, correction_;
  core::DeviceArray<int4> autos_;  // (channel, stand): xx, yy, Re and Im of x conj(y)
  core::PhaseTimer timer_;

 private:
  std::map<std::string, double> phase_ms_;
};

}  // namespace epic
