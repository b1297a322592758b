// mc 02_gpu_naive: 00_cpu moved to the GPU as directly as possible. One thread simulates
// one photon with the same physics (tiny_mc's rejection method for the direction); each
// thread draws from its own cuRAND Philox4_32_10 subsequence; every deposit is a global
// atomicAdd into the batch row of the thread's block (block b adds to row b % 4096; a row
// is a batch of photons for the harness's standard errors, common/mc/gpu.cuh). Deposits
// are added as 64-bit fixed point, so the order of the atomics cannot change the result.
// ~76 interactions per photon make ~76 global atomics per photon: the bottleneck that
// 03_gpu_tallies removes.
#include <curand_kernel.h>

#include "mc/gpu.cuh"
#include "mc/step.hpp"

namespace mc {
namespace {

__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  const unsigned long long photon = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (photon >= ph.photons) return;
  unsigned long long* heat = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);  // this block's batch row
  curandStatePhilox4_32_10_t rng;
  curand_init(ph.seed, photon, 0, &rng);  // one subsequence per photon
  const unsigned last_shell = unsigned(ph.shells - 1);

  float x = 0.0f, y = 0.0f, z = 0.0f;
  float u = 0.0f, v = 0.0f, w = 1.0f;
  float weight = 1.0f;
  for (;;) {
    float t = -logf(curand_uniform(&rng));  // (0, 1]: never log(0)
    x += t * u;
    y += t * v;
    z += t * w;

    const float r = sqrtf(x * x + y * y + z * z) * ph.shells_per_mfp;
    const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
    const float kept = weight * ph.albedo;  // deposit exactly the weight lost
    atomicAdd(&heat[shell], to_fixed(weight - kept));
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
  atomicAdd(&heat[ph.shells], to_fixed(1.0f));  // photons in this batch
}

class GpuNaive final : public Step {
 public:
  explicit GpuNaive(long threads) : threads_(int(threads)) { check_threads(threads); }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    blocks_ = (p.photons + threads_ - 1) / threads_;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_>>>(ph_, unsigned(batches_), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, batches_, rows_.data()); }

 private:
  int threads_;
  Physics ph_{};
  size_t blocks_ = 0, batches_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"02_gpu_naive", "GPU, a photon per thread, cuRAND, global atomics", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuNaive>(core::tunable(t, "threads"));
}

}  // namespace mc
