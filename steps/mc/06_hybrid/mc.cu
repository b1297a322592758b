// mc 06_hybrid: 05_gpu_tuned and 01_cpu_omp at the same time. --gpu-fraction of the photons
// go to the GPU kernel, which is launched asynchronously; the host threads meanwhile run the
// rest as 01_cpu_omp does (batches with their own Philox streams, tagged apart from the GPU
// threads' streams). The merge is exact: the GPU's block rows and the CPU's batch rows are
// all batches of independent photons, so the tally is simply both sets of rows. The best
// split gives each side work in proportion to its rate (measured: steps/mc/06_hybrid/README.md).
#include <algorithm>
#include <cmath>
#include <omp.h>

#include "gpu.cuh"
#include "philox.hpp"
#include "step.hpp"

// 05's kernel, unchanged: its file without its step (see the end of that file).
#define MC_TRANSPORT_ONLY
#include "../05_gpu_tuned/mc.cu"

namespace mc {
namespace {

// The CPU side: 01_cpu_omp's photon, unchanged.
void cpu_photon(const Problem& p, PhiloxStream& rng, double* heat) {
  const float albedo = float(p.albedo());
  const float shells_per_mfp = float(p.shells_per_mfp());
  const float threshold = float(p.weight_threshold), survival = float(p.roulette_survival);
  const unsigned last_shell = unsigned(p.shells - 1);

  float x = 0.0f, y = 0.0f, z = 0.0f;  // launch at the origin, along z
  float u = 0.0f, v = 0.0f, w = 1.0f;
  float weight = 1.0f;
  for (;;) {
    float t = -std::log(rng.uniform());  // move: an exponential step, in mean free paths
    x += t * u;
    y += t * v;
    z += t * w;

    const float r = std::sqrt(x * x + y * y + z * z) * shells_per_mfp;  // absorb
    const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
    const float kept = weight * albedo;  // deposit exactly the weight lost (exact in float),
    heat[shell] += weight - kept;         // so every photon deposits all of its weight
    weight = kept;

    float xi1, xi2;  // new direction: a point uniform in the unit disk (rejection)
    do {
      xi1 = 2.0f * rng.uniform() - 1.0f;
      xi2 = 2.0f * rng.uniform() - 1.0f;
      t = xi1 * xi1 + xi2 * xi2;
    } while (1.0f < t || t == 0.0f);
    u = 2.0f * t - 1.0f;
    v = xi1 * std::sqrt((1.0f - u * u) / t);
    w = xi2 * std::sqrt((1.0f - u * u) / t);

    if (weight < threshold) {  // roulette: unbiased, the survivors carry the lost weight
      if (rng.uniform() > survival) break;
      weight /= survival;
    }
  }
}

class Hybrid final : public Step {
 public:
  Hybrid(long threads, long photons_per_thread, double gpu_fraction)
      : threads_(int(threads)), asked_(unsigned(photons_per_thread)), gpu_fraction_(gpu_fraction) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    p_ = p;
    ph_ = physics_of(p);
    weights_ = weights_of(p);
    ph_.photons = (unsigned long long)std::llround(gpu_fraction_ * double(p.photons));
    cpu_photons_ = p.photons - ph_.photons;
    const unsigned long long min_blocks = 1024;
    const unsigned long long most = ph_.photons / (threads_ * min_blocks);
    photons_per_thread_ = unsigned(std::max(1ull, std::min<unsigned long long>(asked_, most)));
    const unsigned long long per_block = (unsigned long long)threads_ * photons_per_thread_;
    blocks_ = (ph_.photons + per_block - 1) / per_block;
    batches_ = batches_for(blocks_);
    rows_.resize(std::max<size_t>(1, batches_ * (p.shells + 1)));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
    cpu_tally_.resize(p.shells, std::min<uint64_t>(1024, cpu_photons_));
  }

  void compute() override {
    if (blocks_ > 0) {  // asynchronous: the host goes on at once
      CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_, shared_>>>(ph_, weights_, photons_per_thread_, unsigned(batches_), rows_.data());
      CUDA_CHECK_LAUNCH();
    }
    std::fill(cpu_tally_.rows.begin(), cpu_tally_.rows.end(), 0.0);
    const size_t batches = cpu_tally_.batches();
#pragma omp parallel for schedule(dynamic)
    for (size_t b = 0; b < batches; ++b) {
      const uint64_t first = cpu_photons_ * b / batches, last = cpu_photons_ * (b + 1) / batches;
      PhiloxStream rng(p_.seed, b, kTagCpu);
      double* heat = cpu_tally_.row(b);
      for (uint64_t i = first; i < last; ++i) cpu_photon(p_, rng, heat);
      heat[p_.shells] = double(last - first);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  void store(Tally& tally) override {  // the exact merge: GPU rows, then CPU rows
    copy_rows(tally, ph_.shells, batches_, rows_.data());
    tally.rows.insert(tally.rows.end(), cpu_tally_.rows.begin(), cpu_tally_.rows.end());
  }

  void describe(nlohmann::json& params) const override {
    params["photons_per_thread_used"] = photons_per_thread_;
    params["photons_in_flight"] = kInFlight;
    params["threads_per_tally_row"] = kThreadsPerRow;
    params["blocks"] = blocks_;
    params["gpu_photons"] = ph_.photons;
    params["cpu_photons"] = cpu_photons_;
    params["cpu_threads"] = omp_get_max_threads();
  }

 private:
  int threads_;
  unsigned asked_, photons_per_thread_ = 1;
  double gpu_fraction_;
  Problem p_;
  Physics ph_{};
  Weights weights_{};
  uint64_t cpu_photons_ = 0;
  size_t blocks_ = 0, batches_ = 0, shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
  Tally cpu_tally_;
};

}  // namespace

StepInfo step_info() {
  return {"06_hybrid", "CPU (OpenMP) and GPU together, exact merge", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"},
           {"gpu-fraction", 0.9995, 0.0, 1.0, "Fraction of the photons simulated on the GPU (the rest on the CPU cores)", false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<Hybrid>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"),
                                  core::real_tunable(t, "gpu-fraction"));
}

}  // namespace mc
