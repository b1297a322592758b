// epic 04_gpu_batched: 03's pipeline with the whole gulp as one batch. Per gulp:
//   copy      the gulp's voltage bytes, pinned host memory -> device, on a second stream: the
//             next gulp's copy runs while this gulp computes (two device buffers)
//   grid      one thread per (sample, channel, pol, cell): the sum over the stands whose
//             support covers the cell (per-channel lists made once in load()), written once.
//             Every cell is assigned, so no memset and no atomics
//   fft       one batched cuFFT plan for the whole gulp, inverse, in place
//   multiply  one thread per (channel, pixel): the products of every sample of the gulp summed
//             in registers and added to the image in place (the first gulp assigns), as in 03
// and once per run, after the last gulp, `finish` as in 01. The autocorrelations are summed
// per stand as in 03, the first gulp assigning.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <vector>

#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

// A cell's value is the weighted sum of the voltages of the stands that touch it: cell_start
// (channel, cell) indexes that cell's (stand, weight) entries, in stand order.
__global__ void grid_cells(Shape s, int samples, const uint8_t* __restrict__ volts, const int32_t* __restrict__ cell_start,
                           const int32_t* __restrict__ cell_stand, const float* __restrict__ cell_weight, cufftComplex* grids) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (sample, channel, pol, cell): the grids' order
  if (i >= size_t(samples) * s.channels * s.pols * nn) return;
  const size_t cell = i % nn, tcp = i / nn;
  const int p = int(tcp % s.pols);
  const size_t tc = tcp / s.pols;  // sample * channels + channel
  const int c = int(tc % s.channels);
  const uint8_t* bytes = volts + tc * s.stands * s.pols + p;  // stand a's byte at a * pols
  const size_t list = size_t(c) * nn + cell;
  float re = 0, im = 0;
  for (int e = cell_start[list]; e < cell_start[list + 1]; ++e) {
    const uint8_t b = bytes[size_t(cell_stand[e]) * s.pols];
    re += cell_weight[e] * float(nibble_re(b));
    im += cell_weight[e] * float(nibble_im(b));
  }
  grids[i] = make_cuFloatComplex(re, im);
}

__global__ void multiply_accumulate(Shape s, int samples, ProductList pl, bool assign, const cufftComplex* __restrict__ fields,
                                    float* image) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (channel, pixel)
  if (i >= size_t(s.channels) * nn) return;
  const size_t px = i % nn;
  const int c = int(i / nn);
  const int jx = int(px % s.n), jy = int(px / s.n), half = s.n / 2, mask = s.n - 1;
  const size_t dst = size_t((jy + half) & mask) * s.n + ((jx + half) & mask);  // zenith to the centre
  float acc[7] = {0, 0, 0, 0, 0, 0, 0};  // at most 7 planes: XX, YY, XY* (2), YX* (2), I
  for (int t = 0; t < samples; ++t) {
    const size_t tc = size_t(t) * s.channels + c;
    const cufftComplex fx = fields[tc * s.pols * nn + px];
    const cufftComplex fy = s.pols > 1 ? fields[(tc * s.pols + 1) * nn + px] : fx;
    for (int k = 0; k < pl.count; ++k) {
      float* o = acc + pl.plane[k];
      switch (Product(pl.kind[k])) {
        case Product::XX: o[0] += fx.x * fx.x + fx.y * fx.y; break;
        case Product::YY: o[0] += fy.x * fy.x + fy.y * fy.y; break;
        case Product::I: o[0] += fx.x * fx.x + fx.y * fx.y + fy.x * fy.x + fy.y * fy.y; break;
        case Product::XY:  // F_X conj(F_Y)
          o[0] += fx.x * fy.x + fx.y * fy.y;
          o[1] += fx.y * fy.x - fx.x * fy.y;
          break;
        case Product::YX:  // F_Y conj(F_X)
          o[0] += fx.x * fy.x + fx.y * fy.y;
          o[1] += fx.x * fy.y - fx.y * fy.x;
          break;
      }
    }
  }
  for (int q = 0; q < s.planes; ++q) {
    float& v = image[(size_t(q) * s.channels + c) * nn + dst];
    v = assign ? acc[q] : v + acc[q];
  }
}


class GpuBatched final : public GpuStep {
 public:
  explicit GpuBatched(long threads) : threads_(int(threads)) {}

  void load(const Inputs& in) override {
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    const size_t nn = size_t(in.image_size) * in.image_size;
    const long long transforms = 1LL * in.samples_per_gulp * in.channels * in.pols;
    if (grids_.size() != size_t(transforms) * nn) {  // one plan for the whole gulp: will its grids fit?
      grids_.resize(0);
      const size_t need =
          transforms * nn * sizeof(cufftComplex) + GridFfts::work_bytes(in.image_size, transforms) + 2 * gulp_bytes(in);
      require_device_memory(need, "a gulp of " + std::to_string(in.samples_per_gulp) + " samples (grids, FFT work area, voltages)",
                            "use fewer --samples or --channels");
    }
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    grids_.resize(size_t(transforms) * nn);
    upload_cell_lists(in);
  }

  void compute() override {
    timer_.reset();
    const size_t nn = size_t(in_.image_size) * in_.image_size;
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp;
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("grid");
      grid_cells<<<blocks(size_t(samples) * in_.channels * in_.pols * nn, threads_), threads_>>>(
          s_, samples, volts, cell_start_.data(), cell_stand_.data(), cell_weight_.data(), grids_.data());
      CUDA_CHECK_LAUNCH();
      if (in_.remove_autos) {
        accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, threads_), threads_>>>(s_, samples, g == 0, volts,
                                                                                           autos_.data());
        CUDA_CHECK_LAUNCH();
      }
      gulps_.consumed(g);  // the grid kernel (and autos) have read gulp g's buffer
      timer_.end();
      timer_.begin("fft");
      ffts_.inverse(grids_.data(), in_.image_size, 1LL * samples * in_.channels * in_.pols);
      timer_.end();
      timer_.begin("multiply");
      multiply_accumulate<<<blocks(size_t(in_.channels) * nn, threads_), threads_>>>(s_, samples, pl, g == 0, grids_.data(),
                                                                                     image_.data());
      CUDA_CHECK_LAUNCH();
      timer_.end();
    }
    finish(pl, threads_);
  }

  void describe(core::Fields& params) const override {
    params.set("batch", in_.samples_per_gulp);  // one plan per gulp
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  void upload_cell_lists(const Inputs& in) {
    const CellLists l = make_cell_lists(in);
    cell_start_.upload(l.start.data(), l.start.size());
    cell_stand_.upload(l.stand.data(), l.stand.size());
    cell_weight_.upload(l.weight.data(), l.weight.size());
  }

  int threads_;
  GridFfts ffts_;  // one plan: every grid of a gulp
  GulpStream gulps_;  // gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<cufftComplex> grids_;
  core::DeviceArray<float> cell_weight_;
  core::DeviceArray<int32_t> cell_start_, cell_stand_;
};

}  // namespace

StepInfo step_info() {
  return {"04_gpu_batched", "GPU, 03's kernels on the whole gulp: one FFT plan a gulp, the next gulp's copy overlapped",
          true, Accuracy::fp32, {{"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<GpuBatched>(core::tunable(t, "threads")); }

}  // namespace epic
