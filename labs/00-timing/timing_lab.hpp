// The interface between lab 00's harness (harness.cu) and the student's timing.cu.
//
// The harness owns the work: the input on the host, the kernel, and the launcher, which counts
// its launches. The student owns the measurement: measure() allocates device memory, copies,
// launches and times, and returns every timed sample and the figures it reports. The harness
// then times the same work with the project's own timer (common/core/timing.hpp) and compares.
#pragma once
#include <cstddef>
#include <vector>

namespace timing_lab {

struct Workload {
  const float* host_in = nullptr;  // n floats, pageable host memory
  float* host_out = nullptr;       // n floats: measure() leaves the kernel's result here
  size_t n = 0;
  int fmas = 0;  // multiply-adds per element (the kernel's arithmetic)
  // Launches the lab's kernel on the default stream: out[i] = f(in[i]) for i < n. Like every
  // kernel launch it returns at once, before the GPU has done the work.
  void launch(const float* device_in, float* device_out) const;
};

struct Measurement {
  std::vector<double> kernel_samples_ms;      // one per timed run: the kernel alone
  std::vector<double> end_to_end_samples_ms;  // one per timed run: copy in, kernel, copy out
  double kernel_ms = 0;                       // the figure you report for the kernel
  double end_to_end_ms = 0;                   // the figure you report end to end
};

// The student's: time `repeat` runs of the workload (timing_lab's README says what a run is).
Measurement measure(const Workload& work, int repeat);

}  // namespace timing_lab
