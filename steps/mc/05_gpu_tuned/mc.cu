// mc 05_gpu_tuned: 04_gpu_rng_direction with the warps kept busy. A photon's length varies:
// 73 interactions, then each roulette survivor (1 in 10) runs 24 more. With one photon per
// thread a warp runs as long as its longest photon: 1 - 0.9^32 = 97 % of warps carry a
// survivor, so a warp averages ~104 interaction slots for 76 useful ones (73 %). Here a
// thread simulates --photons-per-thread photons in one flat loop: when its photon dies it
// launches the next in the same iteration, so lanes never wait for each other until the
// thread's last photon, and the warp's length is the sum of many photons (it varies by a
// few percent, not by a third). Fewer, longer threads also spread the per-block work (zero
// the tallies, reduce them) over more photons. And each thread keeps kInFlight = 4 photons
// in flight: with 16 warps per SM (the shared-memory tallies allow no more) one photon's
// chain of dependent instructions leaves the schedulers idle much of the time (ncu: 61 %
// issue active); four independent photons, fed by two 128-bit draws computed a loop
// iteration ahead, give the scheduler independent instructions to interleave. One branch
// handles the roulettes of all four and one their relaunches, so the four interactions
// are one straight block of code. Many photons per thread also make a float tally column
// large enough to round small deposits systematically; warps flush their columns to the
// fixed-point batch row every kFlushRounds rounds (below).
// --threads and --photons-per-thread are the two axes of the tuning sweep (sweep.json); at
// least 1024 blocks are launched when the photon count allows (fills the GPU and gives the
// harness >= 1024 batches), so at small counts a thread gets fewer photons than asked
// (recorded as photons_per_thread_used).
#include <algorithm>

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

extern __shared__ float heat[];  // [shells + 1][blockDim.x]: column threadIdx.x is a thread's tally

// Positions are in shell widths (so the shell is floor(|r|)) and the direction is kept as
// the sines and cosines it is made of.
struct Photon {
  float x, y, z;
  float sin_theta, cos_phi, sin_phi, cos_theta;
  float weight;
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f}; }

// [1, 2) from the top 23 bits: the float 1.m with m = those bits.
__device__ float one_to_two(uint32_t bits) { return __uint_as_float(0x3f800000u | (bits >> 9)); }

// The step's uniform: 1.m - 1 + 2^-24, in (0, 1) (so the step is never 0 either).
__device__ float step_uniform(uint32_t bits) { return one_to_two(bits) + (-1.0f + 0x1p-24f); }

// The roulette, decided by the step's own uniform xi: survive if xi <= p, and then xi / p is
// again uniform on (0, 1]. Returns false when the photon ends (its weight becomes 0).
__device__ bool roulette(Photon& p, float& xi, const Physics& ph) {
  if (p.weight >= ph.threshold) return true;
  if (xi > ph.survival) {
    p.weight = 0.0f;
    return false;
  }
  xi = fminf(xi * ph.inv_survival, 1.0f);
  p.weight *= ph.inv_survival;
  return true;
}

// Fly log2(xi) * step_scale, deposit into the thread's column (column = threadIdx.x -
// 2^23 threads, see below), scatter with the bits a, b (their low 9 bits each make phi).
// Only SFU math: -ftz=true (meson.build) drops the denormal fix-ups around log2 and rsqrt,
// sqrt(q) is q rsqrt(q), and floor(s) for 0 <= s < 2^23 is the mantissa of s + 2^23 added
// rounding toward zero (the float's bits are 0x4b000000 + floor(s)).
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Physics& ph,
                                   unsigned column, int threads) {
  const float t = __log2f(xi) * ph.step_scale;
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r2 = p.x * p.x + p.y * p.y + p.z * p.z;
  const float r = fminf(r2 * rsqrtf(r2), ph.last_shell);
  const float kept = p.weight * ph.albedo;  // deposit exactly the weight lost
  heat[__float_as_uint(__fadd_rz(r, 8388608.0f)) * threads + column] += p.weight - kept;
  p.weight = kept;

  // cos(theta) = 2 (1.m) - 3 + 2^-23: uniform on [-1 + 2^-23, 1 - 2^-23], never +-1.
  p.cos_theta = fmaf(2.0f, one_to_two(b), -3.0f) + 0x1p-23f;
  const float q = fmaf(-p.cos_theta, p.cos_theta, 1.0f);  // sin^2, >= 2^-23
  p.sin_theta = q * rsqrtf(q);
  const uint32_t phi_bits = ((a & 0x1ffu) << 9) | (b & 0x1ffu);  // 18 bits
  const float phi = fmaf(__uint_as_float(0x3f800000u | (phi_bits << 5)), 6.28318531f, -9.42477796f);  // [-pi, pi)
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}

// One interaction from 64 random bits a, b. Returns false when the roulette ends the photon.
__device__ bool interact(Photon& p, uint32_t a, uint32_t b, const Physics& ph, unsigned column, int threads) {
  float xi = step_uniform(a);
  if (!roulette(p, xi, ph)) return false;
  fly_absorb_scatter(p, xi, a, b, ph, column, threads);
  return true;
}

constexpr int kInFlight = 4;       // photons per thread at a time; 2 Philox draws per round
constexpr unsigned kFlushRounds = 512;  // ~2,000 interactions per lane between flushes

// A float column that keeps growing rounds every small deposit the same way (the deposits
// are the same few values for every photon), a bias that grows with the column: measured
// energy z = -10 at 1024 photons per thread, 2^30 photons. So every kFlushRounds rounds each
// warp sums its 32 columns by shuffles, adds them to the batch row as fixed point, and
// starts its columns again from 0.
__device__ void flush_warp_tally(unsigned column_tid, int threads, int shells, unsigned long long* row) {
  for (int s = 0; s < shells; ++s) {
    float v = heat[s * threads + column_tid];
    heat[s * threads + column_tid] = 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (column_tid % 32 == 0) atomicAdd(&row[s], to_fixed(v));
  }
}

__global__ void transport(Physics ph, unsigned photons_per_thread, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  const unsigned column = unsigned(tid) - 0x4b000000u * unsigned(threads);
  unsigned long long* row = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);

  // This thread's photons: [first, first + count) (none for threads past the end).
  const unsigned long long thread = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long first = thread * photons_per_thread;
  const unsigned count = first < ph.photons ? unsigned(min(ph.photons - first, (unsigned long long)photons_per_thread)) : 0u;
  const Key key = philox_key(ph.seed);
  uint32_t draw = 0;  // one stream per thread, across its photons
  auto bits = [&](uint32_t n) { return philox4x32_10({{n, uint32_t(thread), uint32_t(thread >> 32), kTagGpu}}, key); };
  Counter r[kInFlight / 2];
  for (int i = 0; i < kInFlight / 2; ++i) r[i] = bits(draw++);
  // Slots beyond count start retired: no weight, never launched again.
  Photon p[kInFlight];
  bool live[kInFlight];
  unsigned launched = 0, finished = 0;
  for (int i = 0; i < kInFlight; ++i) {
    p[i] = launch();
    live[i] = launched < count;
    if (live[i]) ++launched; else p[i].weight = 0.0f;
  }
  // The whole warp goes round together (the flush needs every lane) until its last photon ends.
  for (unsigned round = 1; __any_sync(0xffffffffu, finished < count); ++round) {
    Counter next[kInFlight / 2];  // independent of the photons: overlaps with their flights
    for (int i = 0; i < kInFlight / 2; ++i) next[i] = bits(draw++);
    float xi[kInFlight];
    bool ends[kInFlight] = {};
    for (int i = 0; i < kInFlight; ++i) xi[i] = step_uniform(r[i / 2].c[2 * (i % 2)]);
    bool low = false;
    for (int i = 0; i < kInFlight; ++i) low |= p[i].weight < ph.threshold;
    if (low)  // rare for a lane, so one branch for all slots
      for (int i = 0; i < kInFlight; ++i) ends[i] = !roulette(p[i], xi[i], ph);
    for (int i = 0; i < kInFlight; ++i)
      fly_absorb_scatter(p[i], xi[i], r[i / 2].c[2 * (i % 2)], r[i / 2].c[2 * (i % 2) + 1], ph, column, threads);
    bool any_end = false;
    for (int i = 0; i < kInFlight; ++i) any_end |= ends[i];
    if (any_end) {  // count the photons that ended; launch the next ones or retire the slots
      for (int i = 0; i < kInFlight; ++i) {
        if (!ends[i]) continue;
        finished += live[i];
        p[i] = launch();
        if (live[i] && launched < count) ++launched; else { p[i].weight = 0.0f; live[i] = false; }
      }
    }
    for (int i = 0; i < kInFlight / 2; ++i) r[i] = next[i];
    if (round % kFlushRounds == 0) flush_warp_tally(tid, threads, ph.shells, row);
  }
  heat[ph.shells * threads + tid] = float(count);  // photons simulated
  __syncthreads();
  store_block_tally(heat, ph.shells, row);
}

class GpuTuned final : public Step {
 public:
  GpuTuned(long threads, long photons_per_thread) : threads_(int(threads)), asked_(unsigned(photons_per_thread)) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    const unsigned long long min_blocks = 1024;
    const unsigned long long most = p.photons / (threads_ * min_blocks);
    photons_per_thread_ = unsigned(std::max(1ull, std::min<unsigned long long>(asked_, most)));
    const unsigned long long per_block = (unsigned long long)threads_ * photons_per_thread_;
    blocks_ = (p.photons + per_block - 1) / per_block;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
    shared_ = size_t(p.shells + 1) * threads_ * sizeof(float);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_, shared_>>>(ph_, photons_per_thread_, unsigned(batches_), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, batches_, rows_.data()); }

  void describe(nlohmann::json& params) const override {
    params["photons_per_thread_used"] = photons_per_thread_;
    params["blocks"] = blocks_;
  }

 private:
  int threads_;
  unsigned asked_, photons_per_thread_ = 1;
  Physics ph_{};
  size_t blocks_ = 0, batches_ = 0, shared_ = 0;
  DeviceBuffer<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"05_gpu_tuned", "GPU, many photons per thread in one flat loop", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t, const RealTunables&) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc
