// Lab 02-mri-memory, reference solution: 04's registers, 05's constant-memory chunks and a
// one-voxel-per-thread version of 09's shared-memory tiles, in the lab's skeleton.
// For instructors and the tests; students: do not read before you have done the lab.
// The checker's tests (tests/labs/meson.build) build this file as a student's would be built,
// and make the known-wrong solutions from it (wrong.json: exact text replacements).
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

// Given: the weights mu_m, one thread per sample (lab 01's cmpMu).
__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu[m], iMu[m]);
}

// ---- stage 1 (task 1): the voxel and its two sums in registers ------------------------------
__global__ void cmpFhDRegisters(const float* kx, const float* ky, const float* kz,
                                const float* rMu, const float* iMu, const float* x,
                                const float* y, const float* z, float* rFhD, float* iFhD,
                                int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = 0.f, iFhDn_r = 0.f;
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (kx[m] * xn_r + ky[m] * yn_r + kz[m] * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += rMu[m] * cArg - iMu[m] * sArg;
    iFhDn_r += iMu[m] * cArg + rMu[m] * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// ---- stage 2 (task 2): the samples in __constant__ memory, one chunk per launch -------------
constexpr int kChunk = 1024;  // samples per launch: 5 arrays x 4 B x 1024 = 20 KB of the 64 KB

__constant__ float kx_c[kChunk], ky_c[kChunk], kz_c[kChunk], rMu_c[kChunk], iMu_c[kChunk];

// Given: copies the `count` samples from sample `first` on (kx, ky, kz of the problem, rMu, iMu
// of cmpMu) into the five constant arrays, device to device, ordered on the default stream after
// the previous chunk's kernel (which still reads the old contents). count <= kChunk.
void to_constant(const DeviceProblem& d, const float* rMu, const float* iMu, int first,
                 int count) {
  const size_t bytes = count * sizeof(float);
  CUDA_CHECK(cudaMemcpyToSymbolAsync(kx_c, d.kx.data() + first, bytes, 0, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(ky_c, d.ky.data() + first, bytes, 0, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(kz_c, d.kz.data() + first, bytes, 0, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(rMu_c, rMu + first, bytes, 0, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(iMu_c, iMu + first, bytes, 0, cudaMemcpyDeviceToDevice));
}

__global__ void cmpFhDConstant(const float* x, const float* y, const float* z, float* rFhD,
                               float* iFhD, int count, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];  // the sums of the chunks before this one
  for (int m = 0; m < count; ++m) {
    const float expFhD = 2 * core::kPiF * (kx_c[m] * xn_r + ky_c[m] * yn_r + kz_c[m] * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += rMu_c[m] * cArg - iMu_c[m] * sArg;
    iFhDn_r += iMu_c[m] * cArg + rMu_c[m] * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// ---- stage 3 (task 3): tiles of blockDim.x samples staged in shared memory ------------------
constexpr int kTileArrays = 5;  // kx, ky, kz, rMu, iMu: one shared array of blockDim.x floats each

__global__ void cmpFhDShared(const float* kx, const float* ky, const float* kz, const float* rMu,
                             const float* iMu, const float* x, const float* y, const float* z,
                             float* rFhD, float* iFhD, int numK, int numX) {
  extern __shared__ float tile_s[];  // kTileArrays * blockDim.x floats (the launch's 3rd argument)
  float* kx_s = tile_s;
  float* ky_s = kx_s + blockDim.x;
  float* kz_s = ky_s + blockDim.x;
  float* rMu_s = kz_s + blockDim.x;
  float* iMu_s = rMu_s + blockDim.x;
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  // A thread past the last voxel has no voxel but still copies its share of every tile and
  // meets every barrier: it computes with zeros and stores nothing.
  const bool hasVoxel = n < numX;
  const float xn_r = hasVoxel ? x[n] : 0.f, yn_r = hasVoxel ? y[n] : 0.f,
              zn_r = hasVoxel ? z[n] : 0.f;
  float rFhDn_r = 0.f, iFhDn_r = 0.f;
  for (int tile = 0; tile < numK; tile += blockDim.x) {
    const int count = min(int(blockDim.x), numK - tile);  // the last tile is partial
    __syncthreads();  // every thread is done with the previous tile
    if (threadIdx.x < count) {
      const int m = tile + threadIdx.x;
      kx_s[threadIdx.x] = kx[m];
      ky_s[threadIdx.x] = ky[m];
      kz_s[threadIdx.x] = kz[m];
      rMu_s[threadIdx.x] = rMu[m];
      iMu_s[threadIdx.x] = iMu[m];
    }
    __syncthreads();  // the whole tile is in shared memory
    for (int m = 0; m < count; ++m) {
      const float expFhD = 2 * core::kPiF * (kx_s[m] * xn_r + ky_s[m] * yn_r + kz_s[m] * zn_r);
      const float cArg = cosf(expFhD);
      const float sArg = sinf(expFhD);
      rFhDn_r += rMu_s[m] * cArg - iMu_s[m] * sArg;
      iFhDn_r += iMu_s[m] * cArg + rMu_s[m] * sArg;
    }
  }
  if (hasVoxel) {
    rFhD[n] = rFhDn_r;
    iFhD[n] = iFhDn_r;
  }
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int stage) : threads_(threads), stage_(stage) {}
  void load(const Inputs& in) override {
    dev_.upload(in);
    rMu_.resize(in.numK);
    iMu_.resize(in.numK);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), rMu_.data(), iMu_.data(),
                                                      d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    const int blocks = blocks_for(d.numX, threads_);
    if (stage_ == 1) {
      cmpFhDRegisters<<<blocks, threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(), rMu_.data(),
                                            iMu_.data(), d.x.data(), d.y.data(), d.z.data(),
                                            d.rFhD.data(), d.iFhD.data(), d.numK, d.numX);
      CUDA_CHECK_LAUNCH();
    } else if (stage_ == 2) {
      for (int first = 0; first < d.numK; first += kChunk) {
        const int count = std::min(kChunk, d.numK - first);  // the last chunk is partial
        to_constant(d, rMu_.data(), iMu_.data(), first, count);
        cmpFhDConstant<<<blocks, threads_>>>(d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(),
                                             d.iFhD.data(), count, d.numX);
        CUDA_CHECK_LAUNCH();
      }
    } else {
      const size_t tileBytes = kTileArrays * threads_ * sizeof(float);
      cmpFhDShared<<<blocks, threads_, tileBytes>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                    rMu_.data(), iMu_.data(), d.x.data(),
                                                    d.y.data(), d.z.data(), d.rFhD.data(),
                                                    d.iFhD.data(), d.numK, d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, stage_;
  DeviceProblem dev_;
  DeviceArray<float> rMu_, iMu_;  // the weights, one per sample, written by cmpMu
};

}  // namespace

// The checker passes --threads and --stage: keep their names. Their defaults are what the
// timed run uses.
StepInfo step_info() {
  return {"lab_02_mri_memory", "Lab 02: registers, constant-memory chunks, shared-memory tiles",
          true, Accuracy::exact,
          {{"threads", 256, 32, 1024, "Threads per block (= samples per shared tile)"},
           {"stage", 3, 1, 3, "Which kernel: 1 registers, 2 constant chunks, 3 shared tiles"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")),
                                   int(core::tunable(t, "stage")));
}

}  // namespace mri
