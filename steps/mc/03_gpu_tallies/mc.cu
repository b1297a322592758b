// mc 03_gpu_tallies: 02_gpu_naive without the global atomics. Every thread owns a column of
// a shared-memory array heat[shell][thread] and adds its deposits there: no atomics (nobody
// else writes the column) and no bank conflicts (a warp's 32 columns are 32 consecutive
// words). A local array float heat[101] would be the same idea in local memory, which is
// off-chip: 404 bytes x 2048 threads per SM overflow the 256 KB L1. At the end the block
// reduces its columns in three levels (the published CUDA lab report's hierarchy): warp
// shuffles sum each warp's 32 columns, a tree in shared memory sums the warps, and the block
// adds its sums to its batch row in global memory: 102 atomics per block of 128 photons
// instead of ~9,700.
#include <curand_kernel.h>

#include "mc/gpu.cuh"
#include "mc/step.hpp"

namespace mc {
namespace {

// Columns -> the block's batch row: shuffles within each warp, then a tree over the warps,
// then one fixed-point atomicAdd per shell. Row `shells` of heat holds the photon counts.
__device__ void store_block_tally(float* heat, int shells, unsigned long long* row) {
  const int threads = blockDim.x, tid = threadIdx.x, lane = tid % 32, warps = threads / 32;
  for (int s = 0; s <= shells; ++s) {  // 1. warp: lane 0's column gets the warp's sum
    float v = heat[s * threads + tid];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) heat[s * threads + tid] = v;
  }
  __syncthreads();
  int stride = 1;  // 2. block: warp w adds warp w + stride, halving until warp 0 has it all
  while (stride < warps) stride *= 2;
  for (stride /= 2; stride > 0; stride /= 2) {
    for (int i = tid; i < (shells + 1) * stride; i += threads) {
      const int s = i / stride, w = i % stride;
      if (w + stride < warps) heat[s * threads + 32 * w] += heat[s * threads + 32 * (w + stride)];
    }
    __syncthreads();
  }
  for (int s = tid; s <= shells; s += threads) atomicAdd(&row[s], to_fixed(heat[s * threads]));  // 3. one update per block
}

__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  extern __shared__ float heat[];  // [shells + 1][blockDim.x]: column threadIdx.x is this thread's
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  float* my_heat = heat + tid;  // my_heat[shell * threads]

  const unsigned long long photon = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (photon < ph.photons) {
    curandStatePhilox4_32_10_t rng;
    curand_init(ph.seed, photon, 0, &rng);
    const unsigned last_shell = unsigned(ph.shells - 1);

    float x = 0.0f, y = 0.0f, z = 0.0f;
    float u = 0.0f, v = 0.0f, w = 1.0f;
    float weight = 1.0f;
    for (;;) {
      float t = -logf(curand_uniform(&rng));
      x += t * u;
      y += t * v;
      z += t * w;

      const float r = sqrtf(x * x + y * y + z * z) * ph.shells_per_mfp;
      const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
      const float kept = weight * ph.albedo;  // deposit exactly the weight lost
      my_heat[shell * threads] += weight - kept;
      weight = kept;

      float xi1, xi2;
      do {
        xi1 = 2.0f * curand_uniform(&rng) - 1.0f;
        xi2 = 2.0f * curand_uniform(&rng) - 1.0f;
        t = xi1 * xi1 + xi2 * xi2;
      } while (1.0f < t || t == 0.0f);
      u = 2.0f * t - 1.0f;
      v = xi1 * sqrtf((1.0f - u * u) / t);
      w = xi2 * sqrtf((1.0f - u * u) / t);

      if (weight < ph.threshold) {
        if (curand_uniform(&rng) > ph.survival) break;
        weight /= ph.survival;
      }
    }
    my_heat[ph.shells * threads] = 1.0f;  // photons simulated
  }
  store_block_tally(heat, ph.shells, rows + size_t(blockIdx.x % batches) * (ph.shells + 1));
}

class GpuTallies final : public Step {
 public:
  explicit GpuTallies(long threads) : threads_(int(threads)) { check_threads(threads); }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    blocks_ = (p.photons + threads_ - 1) / threads_;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
    shared_ = size_t(p.shells + 1) * threads_ * sizeof(float);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_, shared_>>>(ph_, unsigned(batches_), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, batches_, rows_.data()); }

 private:
  int threads_;
  Physics ph_{};
  size_t blocks_ = 0, batches_ = 0, shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"03_gpu_tallies", "GPU, per-thread tallies in shared memory, block reduction", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTallies>(core::tunable(t, "threads"));
}

}  // namespace mc
