// Lab 02-mri-memory: registers, constant-memory chunks, shared-memory tiles. Read the handout,
// labs/02-mri-memory/README.md, first.
//
// One program, three versions of the F^H d / Q kernel; --stage picks the one that runs:
//   --stage 1  task 1: the voxel and its sums in registers, samples from global memory
//   --stage 2  task 2: the samples in __constant__ memory, one chunk of them per launch
//   --stage 3  task 3: the samples staged through shared memory in tiles (the default: timed)
// Write the code marked TODO. Everything else (the problem, the copies to and from the GPU,
// timing, validation) comes from the harness: check your work with
// `./stepwise lab 02-mri-memory check`, which validates all three stages.
//
// As handed out this file compiles and runs, but leaves the output at zero, so the checker
// fails it.
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
// TODO 1: one thread per voxel n. Read x[n], y[n], z[n] once into local variables, accumulate
// the two sums in two local variables over all numK samples, and write rFhD[n], iFhD[n] once,
// after the loop:
//   phase = 2 pi (kx[m] x[n] + ky[m] y[n] + kz[m] z[n])         (core::kPiF is pi in float)
//   rFhD[n] += rMu[m] cos(phase) - iMu[m] sin(phase)
//   iFhD[n] += iMu[m] cos(phase) + rMu[m] sin(phase)
// Use the accurate sinf/cosf (the lab is graded in the "exact" accuracy class). Mind the
// threads of the last block that have no voxel.
__global__ void cmpFhDRegisters(const float* kx, const float* ky, const float* kz,
                                const float* rMu, const float* iMu, const float* x,
                                const float* y, const float* z, float* rFhD, float* iFhD,
                                int numK, int numX) {
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

// TODO 2a: task 1's loop over the `count` samples of one chunk, read from kx_c, ky_c, kz_c,
// rMu_c, iMu_c. Each launch adds its chunk to what the launches before it left in rFhD[n],
// iFhD[n] (compute() sets them to zero before the first chunk).
__global__ void cmpFhDConstant(const float* x, const float* y, const float* z, float* rFhD,
                               float* iFhD, int count, int numX) {
}

// ---- stage 3 (task 3): tiles of blockDim.x samples staged in shared memory ------------------
// TODO 3a: one launch, one thread per voxel, the sums in registers as in task 1. The block walks
// all numK samples in tiles of blockDim.x: every thread copies (at most) one sample of the tile
// from global memory into shared memory, and then every thread runs the loop over the samples
// of the tile, read from shared memory. Declare the tile as dynamic shared memory,
//   extern __shared__ float tile_s[];   // kx, ky, kz, rMu, iMu: 5 * blockDim.x floats
// and cut it into the five arrays. Three things decide whether it is right:
//   - the last tile is partial when blockDim.x does not divide numK (the checker uses 1,500
//     samples in tiles of 96): copy only the samples that exist, loop only over them;
//   - __syncthreads() after the copy (no thread reads the tile before every sample is in it)
//     and before the next copy (no thread overwrites a sample that another still reads);
//   - a thread past the last voxel has no voxel, but the block's tiles need its copies and every
//     thread of the block must reach every __syncthreads(): it must not return early.
__global__ void cmpFhDShared(const float* kx, const float* ky, const float* kz, const float* rMu,
                             const float* iMu, const float* x, const float* y, const float* z,
                             float* rFhD, float* iFhD, int numK, int numX) {
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
      // TODO 2b: the chunks. As handed out this is one empty chunk (no samples). Make it a loop
      // over every chunk of at most kChunk samples (the first from sample 0, the next from
      // kChunk, ...): copy the chunk into the constant arrays, then launch cmpFhDConstant on it
      // with its true length. The last chunk is partial whenever kChunk does not divide numK
      // (the checker uses 1,500 samples: a chunk of 1,024, then one of 476).
      const int first = 0, count = 0;
      to_constant(d, rMu_.data(), iMu_.data(), first, count);
      cmpFhDConstant<<<blocks, threads_>>>(d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(),
                                           d.iFhD.data(), count, d.numX);
      CUDA_CHECK_LAUNCH();
    } else {
      // TODO 3b: the bytes of one tile of dynamic shared memory: five arrays of threads_
      // floats.
      const size_t tileBytes = 0;
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
