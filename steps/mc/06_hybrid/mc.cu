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

struct Photon {
  float x, y, z;  // position, mean free paths
  float u, v, w;  // direction
  float weight;
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f}; }

// [1, 2) from the top 23 bits: the float 1.m with m = those bits.
__device__ float one_to_two(uint32_t bits) { return __uint_as_float(0x3f800000u | (bits >> 9)); }

// The step's uniform in (0, 1]: 2 - 1.m.
__device__ float step_uniform(uint32_t bits) { return 2.0f - one_to_two(bits); }

// The roulette, decided by the step's own uniform xi: survive if xi <= p, and then xi / p is
// again uniform on (0, 1]. Returns false when the photon ends.
__device__ bool roulette(Photon& p, float& xi, const Physics& ph) {
  if (p.weight >= ph.threshold) return true;
  if (xi > ph.survival) return false;
  xi = fminf(xi * ph.inv_survival, 1.0f);
  p.weight *= ph.inv_survival;
  return true;
}

// Fly -log(xi), deposit (1 - albedo) x weight x `share` (1, or 0 for a finished slot), scatter
// with the bits a, b (their low 9 bits each make phi). The math is SFU-only: -ftz=true
// (meson.build) drops the denormal fix-ups around log2, sqrt(q) is q rsqrt(q), and
// floor(s) for 0 <= s < 2^23 is the low mantissa of s + 2^23 added rounding toward zero.
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, float share, const Physics& ph,
                                   float* my_heat, int threads) {
  const float t = -__logf(xi);
  p.x += t * p.u;
  p.y += t * p.v;
  p.z += t * p.w;

  const float r2 = p.x * p.x + p.y * p.y + p.z * p.z;
  const float shells = fminf(r2 * rsqrtf(r2 + 1e-30f) * ph.shells_per_mfp, ph.last_shell);
  const unsigned shell = __float_as_uint(__fadd_rz(shells, 8388608.0f)) - 0x4b000000u;
  my_heat[shell * threads] += share * ph.absorbed * p.weight;
  p.weight *= ph.albedo;

  // cos(theta) = 2 (1.m) - 3 + 2^-23: uniform on [-1 + 2^-23, 1 - 2^-23], never +-1.
  const float cos_theta = fmaf(2.0f, one_to_two(b), -3.0f) + 0x1p-23f;
  const float q = fmaf(-cos_theta, cos_theta, 1.0f);  // sin^2, >= 2^-23
  const float sin_theta = q * rsqrtf(q);
  const uint32_t phi_bits = ((a & 0x1ffu) << 9) | (b & 0x1ffu);  // 18 bits
  const float phi = fmaf(__uint_as_float(0x3f800000u | (phi_bits << 5)), 6.28318531f, -9.42477796f);  // [-pi, pi)
  float sin_phi, cos_phi;
  __sincosf(phi, &sin_phi, &cos_phi);
  p.u = sin_theta * cos_phi;
  p.v = sin_theta * sin_phi;
  p.w = cos_theta;
}

// One interaction from 64 random bits a, b. Returns false when the roulette ends the photon.
__device__ bool interact(Photon& p, uint32_t a, uint32_t b, const Physics& ph, float* my_heat, int threads) {
  float xi = step_uniform(a);
  if (!roulette(p, xi, ph)) return false;
  fly_absorb_scatter(p, xi, a, b, 1.0f, ph, my_heat, threads);
  return true;
}

__global__ void transport(Physics ph, unsigned photons_per_thread, unsigned batches, unsigned long long* rows) {
  extern __shared__ float heat[];  // [shells + 1][blockDim.x]: column threadIdx.x is this thread's
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  float* my_heat = heat + tid;  // my_heat[shell * threads]

  // This thread's photons: [first, first + count).
  const unsigned long long thread = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long first = thread * photons_per_thread;
  const unsigned count = first < ph.photons ? unsigned(min(ph.photons - first, (unsigned long long)photons_per_thread)) : 0u;
  if (count > 0) {
    const Key key = philox_key(ph.seed);
    uint32_t draw = 0;  // one stream per thread, across its photons
    Counter r = philox4x32_10({{draw, uint32_t(thread), uint32_t(thread >> 32), kTagGpu}}, key);
    Photon a = launch(), b = launch();  // two photons in flight; b idles if count is 1
    float a_on = 1.0f, b_on = count > 1 ? 1.0f : 0.0f;
    unsigned launched = count > 1 ? 2 : 1;
    while (a_on + b_on > 0.0f) {
      const Counter next = philox4x32_10({{++draw, uint32_t(thread), uint32_t(thread >> 32), kTagGpu}}, key);
      float xi_a = step_uniform(r.c[0]), xi_b = step_uniform(r.c[2]);
      const bool a_ends = !roulette(a, xi_a, ph), b_ends = !roulette(b, xi_b, ph);
      fly_absorb_scatter(a, xi_a, r.c[0], r.c[1], a_ends ? 0.0f : a_on, ph, my_heat, threads);
      fly_absorb_scatter(b, xi_b, r.c[2], r.c[3], b_ends ? 0.0f : b_on, ph, my_heat, threads);
      if (a_ends) {  // launch the thread's next photon in this slot, or retire the slot
        a = launch();
        if (launched < count) ++launched; else a_on = 0.0f;
      }
      if (b_ends) {
        b = launch();
        if (launched < count) ++launched; else b_on = 0.0f;
      }
      r = next;
    }
    my_heat[ph.shells * threads] = float(count);  // photons simulated
  }
  store_block_tally(heat, ph.shells, rows + size_t(blockIdx.x % batches) * (ph.shells + 1));
}

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
    heat[shell] += (1.0f - albedo) * weight;
    weight *= albedo;

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
    ph_.photons = (unsigned long long)std::llround(gpu_fraction_ * double(p.photons));
    cpu_photons_ = p.photons - ph_.photons;
    const unsigned long long min_blocks = 1024;
    const unsigned long long most = ph_.photons / (threads_ * min_blocks);
    photons_per_thread_ = unsigned(std::max(1ull, std::min<unsigned long long>(asked_, most)));
    const unsigned long long per_block = (unsigned long long)threads_ * photons_per_thread_;
    blocks_ = (ph_.photons + per_block - 1) / per_block;
    batches_ = batches_for(blocks_);
    rows_.resize(std::max<size_t>(1, batches_ * (p.shells + 1)));
    shared_ = size_t(p.shells + 1) * threads_ * sizeof(float);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
    cpu_tally_.resize(p.shells, std::min<uint64_t>(1024, cpu_photons_));
  }

  void compute() override {
    if (blocks_ > 0) {  // asynchronous: the host goes on at once
      CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_, shared_>>>(ph_, photons_per_thread_, unsigned(batches_), rows_.data());
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
  uint64_t cpu_photons_ = 0;
  size_t blocks_ = 0, batches_ = 0, shared_ = 0;
  DeviceBuffer<unsigned long long> rows_;
  Tally cpu_tally_;
};

}  // namespace

StepInfo step_info() {
  return {"06_hybrid", "CPU (OpenMP) and GPU together, exact merge", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}},
          {{"gpu-fraction", 0.998, 0.0, 1.0, "Fraction of the photons simulated on the GPU (the rest on the CPU cores)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t, const RealTunables& reals) {
  return std::make_unique<Hybrid>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"),
                                  real_tunable(reals, "gpu-fraction"));
}

}  // namespace mc
