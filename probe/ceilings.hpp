// What the probe measures (probe.cu: the kernels and their timing) for main.cpp to check,
// print and record. Apart from main.cpp so that the nvcc compile reads neither CLI11 nor the
// JSON library, most of its time (report/evidence/cpu-vm-nvcc-compile-cost.txt).
#pragma once
#include "core/device.hpp"

namespace probe {

// Rates per second: flop, results (SFU) or bytes.
struct Ceilings {
  double sfu_per_s, fp32_flop_per_s, fp16_flop_per_s, copy_bytes_per_s, h2d_pinned_bytes_per_s,
      tf32_tensor_flop_per_s, bf16_tensor_flop_per_s;
};
// The best time of each measurement, ms.
struct BestTimes {
  double sfu_ms, fma_ms, hfma2_ms, copy_ms, h2d_ms, tf32_mma_ms, bf16_mma_ms;
};
struct Measured {
  Ceilings ceilings;
  BestTimes ms;
};

// Runs every measurement on `device` (selected by core::require_gpu).
Measured measure_ceilings(const core::DeviceInfo& device);

}  // namespace probe
