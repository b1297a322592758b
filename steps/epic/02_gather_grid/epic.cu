// epic 02_gather_grid: 01's pipeline with the gridding turned around, from a scatter to a
// gather. Per batch of samples of a gulp:
//   copy      the batch's voltage bytes, pinned host memory -> device
//   grid      one thread per (sample, channel, pol, cell): the sum over the stands whose
//             support covers the cell (per-channel lists made once in load()), written once.
//             Every cell is assigned, so no memset and no atomics
//   fft       one batched cuFFT plan: every grid of the batch, inverse, in place
//   multiply  one thread per (sample, channel, pixel): the products of F_X and F_Y, written per
//             sample (the memo's XGrid)
//   reduce    one thread per (plane, channel, pixel): sum the batch's samples into the image
// and once per run, after the last gulp, `finish`: subtract the autocorrelations (summed per
// stand in `autos` kernels as the batches go) and apply the grid correction. CUDA events time
// every phase (the breakdown goes into the record) and NVTX ranges name them in Nsight Systems.
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

__global__ void cross_multiply(Shape s, int batch, ProductList pl, const cufftComplex* __restrict__ fields, float* products) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (sample, channel, pixel)
  if (i >= size_t(batch) * s.channels * nn) return;
  const size_t px = i % nn, tc = i / nn;
  const int jx = int(px % s.n), jy = int(px / s.n), half = s.n / 2, mask = s.n - 1;
  const size_t dst = size_t((jy + half) & mask) * s.n + ((jx + half) & mask);  // zenith to the centre
  const cufftComplex fx = fields[tc * s.pols * nn + px];
  const cufftComplex fy = s.pols > 1 ? fields[(tc * s.pols + 1) * nn + px] : fx;
  float* out = products + tc * s.planes * nn + dst;
  for (int k = 0; k < pl.count; ++k) {
    float* o = out + pl.plane[k] * nn;
    switch (Product(pl.kind[k])) {
      case Product::XX: o[0] = fx.x * fx.x + fx.y * fx.y; break;
      case Product::YY: o[0] = fy.x * fy.x + fy.y * fy.y; break;
      case Product::I: o[0] = fx.x * fx.x + fx.y * fx.y + fy.x * fy.x + fy.y * fy.y; break;
      case Product::XY:  // F_X conj(F_Y)
        o[0] = fx.x * fy.x + fx.y * fy.y;
        o[nn] = fx.y * fy.x - fx.x * fy.y;
        break;
      case Product::YX:  // F_Y conj(F_X)
        o[0] = fx.x * fy.x + fx.y * fy.y;
        o[nn] = fx.x * fy.y - fx.y * fy.x;
        break;
    }
  }
}

__global__ void reduce_samples(Shape s, int batch, const float* __restrict__ products, float* image) {
  const size_t nn = size_t(s.n) * s.n;
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // (plane, channel, pixel)
  if (i >= size_t(s.planes) * s.channels * nn) return;
  const size_t px = i % nn;
  const int c = int(i / nn % s.channels), q = int(i / (nn * s.channels));
  float sum = 0;
  for (int t = 0; t < batch; ++t) sum += products[((size_t(t) * s.channels + c) * s.planes + q) * nn + px];
  image[i] += sum;
}

class GpuPipeline final : public GpuStep {
 public:
  GpuPipeline(long batch, long threads) : batch_limit_(int(batch)), threads_(int(threads)) {}

  void load(const Inputs& in) override {
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    // The batch: the memo transforms a whole gulp at once; the limit keeps the grids and the
    // per-sample products within memory.
    batch_ = std::min(batch_limit_, in.samples_per_gulp);
    const size_t nn = size_t(in.image_size) * in.image_size;
    const size_t bytes_per_sample = size_t(in.channels) * in.stands * in.pols;
    const size_t need = batch_ * (bytes_per_sample + size_t(in.channels) * (in.pols * nn * sizeof(cufftComplex) + in.planes * nn * sizeof(float)));
    if (grids_.size() != size_t(batch_) * in.channels * in.pols * nn) {  // before allocating: will it fit?
      grids_.resize(0);
      products_.resize(0);
      require_device_memory(need, "--batch " + std::to_string(batch_) + " (grids and products)", "use a smaller --batch");
    }
    pinned_.load(in);  // the F-engine's bytes in pinned memory, copied once
    volts_.resize(size_t(batch_) * bytes_per_sample);
    grids_.resize(size_t(batch_) * in.channels * in.pols * nn);
    products_.resize(size_t(batch_) * in.channels * in.planes * nn);
    upload_cell_lists(in);
  }

  void compute() override {
    timer_.reset();
    const size_t nn = size_t(in_.image_size) * in_.image_size;
    const size_t bytes_per_sample = size_t(in_.channels) * in_.stands * in_.pols;
    const ProductList pl = product_list(in_);
    timer_.begin("memset");
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // once per image
    CUDA_CHECK(cudaMemsetAsync(autos_.data(), 0, autos_.size() * sizeof(int4)));
    timer_.end();
    for (int g = 0; g < in_.gulps; ++g)
      for (int t0 = 0; t0 < in_.samples_per_gulp; t0 += batch_) {
        const int b = std::min(batch_, in_.samples_per_gulp - t0);
        const size_t first = size_t(g) * in_.samples_per_gulp + t0;
        timer_.begin("copy");
        CUDA_CHECK(cudaMemcpyAsync(volts_.data(), pinned_.data() + first * bytes_per_sample, b * bytes_per_sample,
                                   cudaMemcpyHostToDevice));
        timer_.end();
        timer_.begin("grid");
        grid_cells<<<blocks(size_t(b) * in_.channels * in_.pols * nn, threads_), threads_>>>(
            s_, b, volts_.data(), cell_start_.data(), cell_stand_.data(), cell_weight_.data(), grids_.data());
        CUDA_CHECK_LAUNCH();
        if (in_.remove_autos) {
          accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, threads_), threads_>>>(s_, b, false, volts_.data(), autos_.data());
          CUDA_CHECK_LAUNCH();
        }
        timer_.end();
        timer_.begin("fft");
        ffts_.inverse(grids_.data(), in_.image_size, 1LL * b * in_.channels * in_.pols);
        timer_.end();
        timer_.begin("multiply");
        cross_multiply<<<blocks(size_t(b) * in_.channels * nn, threads_), threads_>>>(s_, b, pl, grids_.data(), products_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
        timer_.begin("reduce");
        reduce_samples<<<blocks(image_.size(), threads_), threads_>>>(s_, b, products_.data(), image_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
      }
    finish(pl, threads_);
  }

  void describe(core::Fields& params) const override {
    params.set("batch", batch_);
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  void upload_cell_lists(const Inputs& in) {
    const CellLists l = make_cell_lists(in);
    cell_start_.upload(l.start.data(), l.start.size());
    cell_stand_.upload(l.stand.data(), l.stand.size());
    cell_weight_.upload(l.weight.data(), l.weight.size());
  }

  int batch_limit_, threads_;
  int batch_ = 0;
  PinnedVoltages pinned_;
  core::DeviceArray<uint8_t> volts_;
  core::DeviceArray<cufftComplex> grids_;
  core::DeviceArray<float> products_;
  core::DeviceArray<float> cell_weight_;
  core::DeviceArray<int32_t> cell_start_, cell_stand_;
  GridFfts ffts_;  // a plan for a gulp's batches and one for its remainder
};

}  // namespace

StepInfo step_info() {
  return {"02_gather_grid", "GPU, 01's pipeline with each cell gathered from its stands: no grid memset, no atomics",
          true, Accuracy::fp32,
          {{"batch", 250, 1, 4000, "Samples per batched FFT (at most the samples of a gulp)"},
           {"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuPipeline>(core::tunable(t, "batch"), core::tunable(t, "threads"));
}

}  // namespace epic
