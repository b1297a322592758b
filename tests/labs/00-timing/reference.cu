// Lab 00-timing, a reference solution: events around the launch alone, the host clock around
// the whole run after the copy back has finished, one untimed warm-up run, medians.
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <vector>

#include "core/cuda_check.cuh"
#include "timing_lab.hpp"

namespace timing_lab {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Measurement measure(const Workload& work, int repeat) {
  const size_t bytes = work.n * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_in, bytes));
  CUDA_CHECK(cudaMalloc(&d_out, bytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));

  Measurement m;
  const int warmup = 1;
  for (int r = 0; r < warmup + repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaMemcpy(d_in, work.host_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(start));
    work.launch(d_in, d_out);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float kernel_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&kernel_ms, start, stop));
    CUDA_CHECK(cudaMemcpy(work.host_out, d_out, bytes, cudaMemcpyDeviceToHost));
    const auto t1 = std::chrono::steady_clock::now();
    if (r < warmup) continue;
    m.kernel_samples_ms.push_back(kernel_ms);
    m.end_to_end_samples_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  m.kernel_ms = median(m.kernel_samples_ms);
  m.end_to_end_ms = median(m.end_to_end_samples_ms);

  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  return m;
}

}  // namespace timing_lab
