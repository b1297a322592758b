// What the MC GPU steps share besides the harness and teach nowhere: the problem's
// parameters as the kernels read them, the fixed-point batch rows and their copy to the host,
// launch checks, the planning of a flat launch (05 on) and the fixed-point weights (07 on).
// Device memory is core::DeviceArray (device_array.cuh).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/device_array.cuh"
#include "core/error.hpp"
#include "mc/problem.hpp"
#include "mc/step.hpp"

namespace mc {

// Kernel arguments (by value, so they live in the constant bank).
struct Physics {
  float albedo;          // mu_s / mu_t: the weight kept at an interaction
  float shells_per_mfp;  // shell index = distance (mean free paths) * this
  float threshold;       // roulette below this weight
  float survival;        // roulette survival probability
  float inv_survival;    // 1 / survival
  float last_shell;      // shells - 1, as a float
  float step_scale;      // -ln(2) * shells_per_mfp: a step of log2(xi) * this, in shell widths
  int shells;
  unsigned long long photons;
  unsigned long long seed;
};

inline Physics physics_of(const Problem& p) {
  return {float(p.albedo()), float(p.shells_per_mfp()), float(p.weight_threshold),
          float(p.roulette_survival), float(1 / p.roulette_survival), float(p.shells - 1),
          float(-M_LN2 * p.shells_per_mfp()), p.shells,
          p.photons, p.seed};
}

// Batch rows on the device: block b adds into row b % batches. At most kMaxBatches rows, so
// the tally stays small (4096 x 102 x 8 bytes) however many blocks run.
constexpr size_t kMaxBatches = 4096;
inline size_t batches_for(size_t blocks) { return blocks < kMaxBatches ? blocks : kMaxBatches; }

// Rows hold 64-bit fixed point in units of 2^-36 of a photon's weight. Integer addition is
// associative, so atomics from blocks that finish in any order give the same bits: a fixed
// seed and launch reproduce the output exactly. Range: 2^22 photons of weight ~1 per row
// (2^34 photons in 4096 rows) use 2^59 of 2^64; resolution 1.5e-11, below float rounding.
constexpr double kFixedOne = 68719476736.0;  // 2^36
__device__ __forceinline__ unsigned long long to_fixed(float v) { return __float2ull_rn(v * 0x1p36f); }

// Copies `batches` fixed-point rows of shells + 1 words from the device into the tally.
inline void copy_rows(Tally& tally, int shells, size_t batches, const unsigned long long* device_rows) {
  std::vector<unsigned long long> fixed(batches * (size_t(shells) + 1));
  if (!fixed.empty())  // 08 with --gpu-fraction 0 has no GPU rows
    CUDA_CHECK(cudaMemcpy(fixed.data(), device_rows, fixed.size() * sizeof(fixed[0]), cudaMemcpyDeviceToHost));
  tally.resize(shells, batches);
  for (size_t i = 0; i < fixed.size(); ++i) tally.rows[i] = double(fixed[i]) / kFixedOne;
}

// Threads per block: whole warps, within what the device allows.
inline void check_threads(long threads) {
  if (threads % 32 != 0) throw core::UsageError("--threads " + std::to_string(threads) + ": must be a multiple of 32 (whole warps)");
}

// Dynamic shared memory above 48 KB needs the kernel's opt-in; refuse what the device lacks.
template <class Kernel>
void allow_shared(Kernel kernel, size_t bytes, const std::string& what) {
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > size_t(optin))
    throw core::UsageError(what + " need " + std::to_string(bytes) + " bytes of shared memory per block; this GPU has " +
                           std::to_string(optin) + ": use fewer --threads or --shells");
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// Many photons per thread in one flat loop (05 on): how many each thread gets, and the grid.
// At least kMinBlocks blocks when the photon count allows (it fills the GPU and gives the
// harness that many batches), so at small counts a thread gets fewer photons than asked.
struct FlatLaunch {
  unsigned photons_per_thread = 1;  // what a thread simulates (at most what was asked)
  size_t blocks = 0, batches = 0;
};

constexpr unsigned long long kMinBlocks = 1024;

inline FlatLaunch plan_flat_launch(unsigned long long photons, int threads, unsigned asked) {
  FlatLaunch l;
  const unsigned long long most = photons / (threads * kMinBlocks);
  l.photons_per_thread = unsigned(std::max(1ull, std::min<unsigned long long>(asked, most)));
  const unsigned long long per_block = (unsigned long long)threads * l.photons_per_thread;
  l.blocks = (photons + per_block - 1) / per_block;
  l.batches = batches_for(l.blocks);
  return l;
}

// Photon weights in 32-bit fixed point (07 on): a launched photon weighs `one` = 2^bits
// units, and every weight a photon can have fits below 2^32 (bits = 31 unless a roulette
// survivor can outweigh 1: --weight-threshold / --roulette-survival > 1). Factors are in
// units of 2^-32.
struct Weights {
  unsigned one;        // 2^bits: a launched photon
  unsigned albedo;     // the fraction kept at an interaction
  unsigned threshold;  // roulette below this weight
  int bits;
};

inline Weights weights_of(const Problem& p) {
  const double heaviest = std::max(1.0, p.weight_threshold / p.roulette_survival);
  const int bits = 31 - int(std::ceil(std::log2(heaviest)));
  return {1u << bits, unsigned(std::min(std::llround(std::ldexp(p.albedo(), 32)), 0xffffffffll)),
          unsigned(std::llround(std::ldexp(p.weight_threshold, bits))), bits};
}

}  // namespace mc
