// What host and device code share: the qualifier that lets one function serve the CPU
// reference, the CPU steps and the kernels, and the constants they all use.
#pragma once

#ifdef __CUDACC__
#define STEPWISE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define STEPWISE_HOST_DEVICE inline
#endif

namespace core {

constexpr double kPi = 3.14159265358979323846264338327950288;
constexpr float kPiF = float(kPi);  // the nearest float, for single-precision kernels

}  // namespace core
