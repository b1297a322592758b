// Device memory the project allocates through core::DeviceArray, counted where it is allocated
// and freed: the `memory.peak_bytes` of a GPU step's results record. What CUDA and the libraries
// allocate for themselves (the context, cuFFT plans' and cuDNN's internal buffers) is not in
// it: it is the memory the step's own arrays take, the part that grows with the problem.
// (No CUDA here: the host-side harness reads it.)
#pragma once
#include <algorithm>
#include <cstddef>

namespace core {

struct DeviceBytes {
  size_t now = 0;   // held in device arrays at this moment
  size_t peak = 0;  // the most held at once since the program started (or reset_peak)
  void allocated(size_t bytes) { now += bytes, peak = std::max(peak, now); }
  void freed(size_t bytes) { now -= std::min(now, bytes); }
  void reset_peak() { peak = now; }
};

// The program's one count (an inline function's static: the same object in every file).
inline DeviceBytes& device_bytes() {
  static DeviceBytes bytes;
  return bytes;
}

}  // namespace core
