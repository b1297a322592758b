// Lab 00-timing: time GPU work correctly. Read the handout, labs/00-timing/README.md, first.
//
// measure() below is a timer that looks reasonable and is wrong in four ways. Fix it: the
// harness then times the same work with the project's own timer and compares (check with
// `./stepwise lab 00-timing check`). You change only this file; the kernel and its launcher
// (work.launch) are the harness's.
//
// A run is: copy work.n floats from work.host_in to the GPU, launch the kernel once
// (work.launch), copy the result back to work.host_out. The kernel sample of a run is the
// kernel alone; the end-to-end sample is the whole run, both copies included.
#include <chrono>
#include <cuda_runtime.h>
#include <numeric>
#include <vector>

#include "core/cuda_check.cuh"
#include "timing_lab.hpp"

namespace timing_lab {

Measurement measure(const Workload& work, int repeat) {
  const size_t bytes = work.n * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_in, bytes));
  CUDA_CHECK(cudaMalloc(&d_out, bytes));

  Measurement m;
  // TODO 3: a first, untimed run before the timed ones (why? see the README).
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaMemcpy(d_in, work.host_in, bytes, cudaMemcpyHostToDevice));
    // TODO 1: the kernel sample must be the kernel alone, and the kernel must have finished
    // when the clock stops. A launch returns before the GPU has done the work: time it with
    // CUDA events (cudaEventRecord before and after the launch, cudaEventSynchronize on the
    // second, cudaEventElapsedTime), and keep the copy out of it.
    work.launch(d_in, d_out);
    const auto t1 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaMemcpy(work.host_out, d_out, bytes, cudaMemcpyDeviceToHost));
    const auto t2 = std::chrono::steady_clock::now();
    m.kernel_samples_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    // TODO 2: the end-to-end sample is the whole run: from before the copy in to after the
    // copy out has finished.
    m.end_to_end_samples_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  // TODO 4: report the median of the samples, not the mean (why? see the README).
  m.kernel_ms = std::accumulate(m.kernel_samples_ms.begin(), m.kernel_samples_ms.end(), 0.0) / repeat;
  m.end_to_end_ms = std::accumulate(m.end_to_end_samples_ms.begin(), m.end_to_end_samples_ms.end(), 0.0) / repeat;

  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  return m;
}

}  // namespace timing_lab
