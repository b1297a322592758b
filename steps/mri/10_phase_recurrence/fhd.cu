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
// Voxels that are not such a grid (Parboil's inputs) are bad input for this step: exit 2.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

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
  double sinD, cosD;  // in double: once per sample, and every voxel step reuses it
  sincospi(2.0 * kx[m] / nx, &sinD, &cosD);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu, float(cosD), float(sinD), float(2 * cosD)};
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

using RecurrenceKernel = void (*)(const KSample*, const float*, const float*, const float*, float*,
                                  float*, int, int, int, int);

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

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int voxels)
      : threads_(threads), voxels_(voxels), recurrence_(recurrence_for(voxels)) {}
  void load(const Inputs& in) override {
    // The grid is found from the coordinates by the problem code (find_grid, problem.hpp).
    if (in.nx == 0)
      throw core::UsageError("the phase recurrence needs a Cartesian grid of voxels (x = (ix - nx/2)/nx, "
                             "y, z alike, in the order (iz * ny + iy) * nx + ix); these voxels are not one");
    const bool first_load = k_.size() == 0;
    dev_.upload(in);
    k_.resize(in.numK);
    if (!first_load) return;
    nx_ = in.nx;
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
    const int rows = d.numX / nx_, segments = (nx_ + voxels_ - 1) / voxels_;
    const dim3 grid(blocks_for(segments * rows, threads_), slices_);
    recurrence_<<<grid, threads_, threads_ * sizeof(KSample)>>>(
        k_.data(), d.x.data(), d.y.data(), d.z.data(), rPart_.data(), iPart_.data(), d.numK,
        samples_per_slice_, nx_, rows);
    CUDA_CHECK_LAUNCH();
    sumSlices<<<blocks_for(d.numX, 256), 256>>>(rPart_.data(), iPart_.data(), d.rFhD.data(),
                                                 d.iFhD.data(), slices_, d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, voxels_;
  RecurrenceKernel recurrence_;
  int nx_ = 0;  // the grid's row length
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
           {"voxels", 16, 1, 16, "Voxels per thread along x: 1, 2, 4, 8 or 16"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "voxels")));
}

}  // namespace mri
