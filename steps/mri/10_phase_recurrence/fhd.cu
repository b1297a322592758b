// mri 10_phase_recurrence: beyond the book. At 09 the loop runs at the MUFU pipe's pace: two
// MUFU per pair. But the voxels lie on a Cartesian grid, x_j = x_0 + j/nx along a row, so
//   e^{i 2 pi k.x_j} = e^{i 2 pi k.x_0} e^{i j delta},  delta = 2 pi kx / nx,
// and the rotation e^{i delta} is the same for every thread: cmpMu computes it once per
// sample. A thread now owns --voxels consecutive voxels of a row; per sample it calls
// __sincosf once, for its first voxel, and reaches the others by the rotation, written as the
// two-term recurrence  w_{j+1} = 2 cos(delta) w_j - w_{j-1}  (one FFMA per component per
// voxel, where a complex multiply costs four). Rounding errors grow along the recurrence, so
// each thread re-seeds it with __sincosf at every sample: the drift spans at most --voxels
// steps. A thread per --voxels voxels is too few threads to fill the GPU on 64^3 voxels, so
// the samples are also split into slices (blockIdx.y) whose partial sums a second kernel adds.
// Voxels that are not a grid (Parboil's inputs) take 09's per-voxel loop instead.
#include <cmath>
#include <cstdio>

#include "device_problem.cuh"
#include "portable.hpp"
#include "weights.hpp"

namespace mri {
namespace {

// 16-byte aligned, 32 bytes: two 128-bit shared loads bring a whole sample.
struct __align__(16) KSample {
  float kx, ky, kz;           // the sample's position in k-space
  float rMu, iMu;             // its weight
  float cosD, sinD, twoCosD;  // e^{i delta}, delta = 2 pi kx / nx: one voxel step along x
};

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      int nx, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  double sinD = 0, cosD = 1;  // in double: once per sample, and every voxel step reuses it
  if (nx > 0) sincospi(2.0 * kx[m] / nx, &sinD, &cosD);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu, float(cosD), float(sinD), float(2 * cosD)};
}

template <int kUnroll>
__global__ void cmpFhD(const KSample* k, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the last voxel still help load the tiles (the barriers need every thread).
  const int nn = min(n, numX - 1);
  const float xn_r = 2 * core::kPiF * x[nn], yn_r = 2 * core::kPiF * y[nn], zn_r = 2 * core::kPiF * z[nn];
  float rFhDn_r = 0, iFhDn_r = 0;
  for (int first = 0; first < numK; first += blockDim.x) {
    const int count = min(int(blockDim.x), numK - first);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[first + threadIdx.x];
    __syncthreads();
#pragma unroll kUnroll
    for (int m = 0; m < count; ++m) {
      const float expFhD = k_s[m].kx * xn_r + k_s[m].ky * yn_r + k_s[m].kz * zn_r;
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      rFhDn_r += k_s[m].rMu * cArg;
      rFhDn_r -= k_s[m].iMu * sArg;
      iFhDn_r += k_s[m].iMu * cArg;
      iFhDn_r += k_s[m].rMu * sArg;
    }
  }
  if (n >= numX) return;
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// One thread: kVoxels consecutive voxels along x of one row (row = iz * ny + iy), over the
// samples of slice blockIdx.y. Its partial sums go to slice blockIdx.y of rPart/iPart.
template <int kVoxels>
__global__ void cmpFhDRecurrence(const KSample* k, const float* x, const float* y, const float* z,
                                 float* rPart, float* iPart, int numK, int samplesPerSlice,
                                 int nx, int rows) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int segments = (nx + kVoxels - 1) / kVoxels;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the last row still help load the tiles (the barriers need every thread).
  const bool owner = t < segments * rows;
  const int row = owner ? t / segments : 0;
  const int ix0 = owner ? (t % segments) * kVoxels : 0;
  const int n0 = row * nx + ix0;
  const float x0_r = 2 * core::kPiF * x[n0], yn_r = 2 * core::kPiF * y[n0], zn_r = 2 * core::kPiF * z[n0];
  float rFhD[kVoxels] = {}, iFhD[kVoxels] = {};
  const int begin = blockIdx.y * samplesPerSlice, end = min(numK, begin + samplesPerSlice);
  for (int first = begin; first < end; first += blockDim.x) {
    const int count = min(int(blockDim.x), end - first);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[first + threadIdx.x];
    __syncthreads();
#pragma unroll(kVoxels >= 16 ? 1 : 2)
    for (int m = 0; m < count; ++m) {
      const float expFhD = k_s[m].kx * x0_r + k_s[m].ky * yn_r + k_s[m].kz * zn_r;
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      // w_0 = mu e^{i phase(x_0)}: this sample's only sin/cos in this thread.
      float wR = k_s[m].rMu * cArg - k_s[m].iMu * sArg;
      float wI = k_s[m].iMu * cArg + k_s[m].rMu * sArg;
      rFhD[0] += wR;
      iFhD[0] += wI;
      if constexpr (kVoxels > 1) {
        // w_1 = w_0 e^{i delta}: one complex rotation.
        float vR = wR * k_s[m].cosD - wI * k_s[m].sinD;
        float vI = wR * k_s[m].sinD + wI * k_s[m].cosD;
        rFhD[1] += vR;
        iFhD[1] += vI;
        // w_{j+1} = e^{i delta} w_j = 2 cos(delta) w_j - w_{j-1}, since e^{i delta} + e^{-i delta} = 2 cos(delta).
#pragma unroll
        for (int j = 2; j < kVoxels; ++j) {
          const float uR = k_s[m].twoCosD * vR - wR, uI = k_s[m].twoCosD * vI - wI;
          wR = vR;
          wI = vI;
          vR = uR;
          vI = uI;
          rFhD[j] += vR;
          iFhD[j] += vI;
        }
      }
    }
  }
  if (!owner) return;
  const size_t slice = size_t(blockIdx.y) * rows * nx;
#pragma unroll
  for (int j = 0; j < kVoxels; ++j)
    if (ix0 + j < nx) {
      rPart[slice + n0 + j] = rFhD[j];
      iPart[slice + n0 + j] = iFhD[j];
    }
}

__global__ void sumSlices(const float* rPart, const float* iPart, float* rFhD, float* iFhD,
                          int slices, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  float r = 0, i = 0;
  for (int s = 0; s < slices; ++s) {
    r += rPart[size_t(s) * numX + n];
    i += iPart[size_t(s) * numX + n];
  }
  rFhD[n] = r;
  iFhD[n] = i;
}

using FhDKernel = void (*)(const KSample*, const float*, const float*, const float*, float*, float*,
                           int, int);
using RecurrenceKernel = void (*)(const KSample*, const float*, const float*, const float*, float*,
                                  float*, int, int, int, int);

FhDKernel kernel_for(int unroll) {
  switch (unroll) {
    case 1: return cmpFhD<1>;
    case 2: return cmpFhD<2>;
    case 4: return cmpFhD<4>;
    case 8: return cmpFhD<8>;
    case 16: return cmpFhD<16>;
  }
  throw core::UsageError("--unroll " + std::to_string(unroll) + ": must be 1, 2, 4, 8 or 16");
}

RecurrenceKernel recurrence_for(int voxels) {
  switch (voxels) {
    case 1: return cmpFhDRecurrence<1>;
    case 2: return cmpFhDRecurrence<2>;
    case 4: return cmpFhDRecurrence<4>;
    case 8: return cmpFhDRecurrence<8>;
    case 16: return cmpFhDRecurrence<16>;
  }
  throw core::UsageError("--voxels " + std::to_string(voxels) + ": must be 1, 2, 4, 8 or 16");
}

// The recurrence needs the generated problems' grid: x = (ix - nx/2)/nx, index
// (iz * ny + iy) * nx + ix. Anything else (Parboil's inputs) takes the per-voxel loop.
bool voxels_on_grid(const Inputs& in) {
  if (in.nx <= 0 || in.ny <= 0 || in.nz <= 0 || size_t(in.nx) * in.ny * in.nz != size_t(in.numX))
    return false;
  const auto near = [](float a, float b) { return std::abs(a - b) <= 1e-6f; };
  for (int iz = 0; iz < in.nz; ++iz)
    for (int iy = 0; iy < in.ny; ++iy)
      for (int ix = 0; ix < in.nx; ++ix) {
        const size_t i = (size_t(iz) * in.ny + iy) * in.nx + ix;
        if (!near(in.x[i], float(ix - in.nx / 2) / in.nx) || !near(in.y[i], float(iy - in.ny / 2) / in.ny) ||
            !near(in.z[i], float(iz - in.nz / 2) / in.nz))
          return false;
      }
  return true;
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int unroll, int voxels)
      : threads_(threads), voxels_(voxels), cmpFhD_(kernel_for(unroll)),
        recurrence_(recurrence_for(voxels)) {}
  void load(const Inputs& in) override {
    const bool first_load = k_.size() == 0;
    dev_.upload(in);
    k_.resize(in.numK);
    if (!first_load) return;
    nx_ = voxels_on_grid(in) ? in.nx : 0;
    if (nx_ == 0) {
      fprintf(stderr, "mri_10_phase_recurrence: the voxels are not a Cartesian grid: using 09's per-voxel loop\n");
      return;
    }
    // Enough sample slices that one wave of blocks fills every SM.
    const int rows = in.numX / nx_, segments = (nx_ + voxels_ - 1) / voxels_;
    const int blocks_per_slice = blocks_for(segments * rows, threads_);
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, recurrence_, threads_,
                                                             threads_ * sizeof(KSample)));
    const int wanted = std::max(1, (per_sm * sms + blocks_per_slice - 1) / blocks_per_slice);
    // Whole tiles per slice, so that only the last slice has a partial tile.
    const int tiles = blocks_for(in.numK, threads_);
    samples_per_slice_ = blocks_for(tiles, std::min(wanted, tiles)) * threads_;
    slices_ = blocks_for(in.numK, samples_per_slice_);
    rPart_.resize(size_t(slices_) * in.numX);
    iPart_.resize(size_t(slices_) * in.numX);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, nx_, d.q());
    CUDA_CHECK_LAUNCH();
    if (nx_ > 0) {
      const int rows = d.numX / nx_, segments = (nx_ + voxels_ - 1) / voxels_;
      const dim3 grid(blocks_for(segments * rows, threads_), slices_);
      recurrence_<<<grid, threads_, threads_ * sizeof(KSample)>>>(
          k_.data(), d.x.data(), d.y.data(), d.z.data(), rPart_.data(), iPart_.data(), d.numK,
          samples_per_slice_, nx_, rows);
      CUDA_CHECK_LAUNCH();
      sumSlices<<<blocks_for(d.numX, 256), 256>>>(rPart_.data(), iPart_.data(), d.rFhD.data(),
                                                   d.iFhD.data(), slices_, d.numX);
      CUDA_CHECK_LAUNCH();
      return;
    }
    cmpFhD_<<<blocks_for(d.numX, threads_), threads_, threads_ * sizeof(KSample)>>>(
        k_.data(), d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK,
        d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, voxels_;
  FhDKernel cmpFhD_;
  RecurrenceKernel recurrence_;
  int nx_ = 0;  // the grid's row length, 0 when the voxels are not a grid
  int slices_ = 1, samples_per_slice_ = 0;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
  DeviceArray<float> rPart_, iPart_;  // per-slice partial sums
};

}  // namespace

StepInfo step_info() {
  return {"10_phase_recurrence", "One sin/cos per sample per thread, the rest by recurrence", true,
          Accuracy::fast,
          {{"threads", 128, 32, 1024, "Threads per block (= samples per tile)"},
           {"unroll", 16, 1, 16, "Unroll factor of the per-voxel loop (voxels not on a grid)"},
           {"voxels", 16, 1, 16, "Voxels per thread along x: 1, 2, 4, 8 or 16"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "voxels")));
}

}  // namespace mri
