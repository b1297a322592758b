// stepwise_probe: measures the ceilings that the report divides each step's throughput by,
// on the GPU it runs on (report/README.md):
//   sfu_per_s        special-function-unit sin/cos results per second (__sinf, __cosf)
//   fp32_flop_per_s  FP32 FFMA rate, 2 flop per FFMA
//   copy_bytes_per_s device-to-device copy, bytes read + bytes written per second
// Each kernel keeps many independent dependency chains per thread so that latency is
// hidden and the unit itself is the limit; each is timed with CUDA events, best of several.
#include <cmath>
#include <cstdio>

#include "cli.hpp"
#include "cuda_check.cuh"
#include "device.hpp"
#include "error.hpp"
#include "results.hpp"

namespace {

constexpr int kChains = 8;
constexpr int kThreads = 256;

// 2 MUFU operations (one sin, one cos) per chain per iteration. The FADD keeps the chain
// dependent on both results, so neither call can be dropped.
__global__ void sfu_kernel(float* sink, int iterations) {
  float v[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) v[c] = 1e-3f * (threadIdx.x + c);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) v[c] = __sinf(v[c]) + __cosf(v[c]);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += v[c];
  if (s == 12345.678f) sink[threadIdx.x] = s;  // never true; keeps the work alive
}

constexpr int kFmaChains = 16;
__global__ void fma_kernel(float* sink, int iterations, float a, float b) {
  float v[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) v[c] = threadIdx.x + c;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) v[c] = fmaf(v[c], a, b);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) s += v[c];
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Best of `runs` timings of launch(), in milliseconds.
template <class Launch>
double best_ms(int runs, Launch launch) {
  auto timer = core::make_device_timer();
  launch();  // warm-up
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    timer->start();
    launch();
    best = std::min(best, timer->stop_ms());
  }
  return best;
}

int run(int argc, char** argv) {
  CLI::App app{"stepwise_probe: measure this GPU's SFU, FP32 and copy ceilings", "stepwise_probe"};
  std::string json_path;
  int device_index = 0;
  bool quiet = false;
  app.add_option("--json", json_path, "Append the ceilings record to this file");
  app.add_option("--device", device_index, "CUDA device index")->check(CLI::Range(0, 63));
  app.add_flag("--quiet", quiet, "Print only errors");
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;

  const core::DeviceInfo device = core::require_gpu(device_index);
  const int blocks = device.sms * 8;
  const double threads = double(blocks) * kThreads;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, kThreads * sizeof(float)));

  const int sfu_iters = 4096;
  const double sfu_ms = best_ms(5, [&] {
    sfu_kernel<<<blocks, kThreads>>>(sink, sfu_iters);
    CUDA_CHECK_LAUNCH();
  });
  const double sfu_per_s = threads * sfu_iters * kChains * 2 / (sfu_ms * 1e-3);

  const int fma_iters = 8192;
  const double fma_ms = best_ms(5, [&] {
    fma_kernel<<<blocks, kThreads>>>(sink, fma_iters, 0.999f, 1e-3f);
    CUDA_CHECK_LAUNCH();
  });
  const double flop_per_s = threads * fma_iters * kFmaChains * 2 / (fma_ms * 1e-3);

  // 1 GiB each way: far beyond the L2, so the copy measures device memory.
  const size_t bytes = size_t(1) << 30, n = bytes / sizeof(float4);
  float4 *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 0x3f, bytes));
  const double copy_ms = best_ms(5, [&] {
    copy_kernel<<<device.sms * 16, 512>>>(src, dst, n);
    CUDA_CHECK_LAUNCH();
  });
  const double copy_bytes_per_s = 2.0 * bytes / (copy_ms * 1e-3);
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaFree(sink));

  for (double rate : {sfu_per_s, flop_per_s, copy_bytes_per_s})
    if (!(rate > 0) || !std::isfinite(rate)) throw core::RuntimeError("probe measured a non-positive or non-finite rate");
  const double per_sm_clk = 1e6 * device.sms * device.clock_mhz;
  if (!quiet) {
    printf("stepwise_probe on %s (%d SMs, %d MHz, sm_%s)\n", device.name.c_str(), device.sms, device.clock_mhz, device.sm.c_str());
    printf("  SFU sin/cos   %.3g /s   (%.1f per SM per clock)\n", sfu_per_s, sfu_per_s / per_sm_clk);
    printf("  FP32 FFMA     %.3g flop/s (%.1f FFMA per SM per clock)\n", flop_per_s, flop_per_s / 2 / per_sm_clk);
    printf("  copy          %.3g bytes/s (read + write)\n", copy_bytes_per_s);
  }
  if (!json_path.empty()) {
    core::json r = core::new_record("probe", "ceilings");
    r["device"] = core::device_json(device);
    r["ceilings"] = {{"sfu_per_s", sfu_per_s}, {"fp32_flop_per_s", flop_per_s}, {"copy_bytes_per_s", copy_bytes_per_s}};
    r["timing"] = {{"sfu_ms", sfu_ms}, {"fma_ms", fma_ms}, {"copy_ms", copy_ms}};
    core::append_record(json_path, r);
  }
  return core::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return run(argc, argv); });
}
