constexpr int kInFlight = 8;                      // photons per thread at a time
constexpr unsigned kFlushRounds = 2048 / kInFlight;  // ~2,000 interactions per lane between flushes

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

// One round: an interaction of each photon in flight, 64 random bits each (one Philox4x32-10
// draw per two photons). The roulette is a branch per slot: a warp takes it when any of its
// 32 lanes has that slot below the threshold.
__device__ void transport_round(Photon (&p)[kInFlight], float& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Physics& ph, const Derived& dv,
                                unsigned column, int threads) {
#pragma unroll
  for (int d = 0; d < kInFlight / 2; ++d) {
    const Counter r = philox4x32_10({{draw + d, thread_lo, thread_hi, kTagGpu}}, key);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      Photon& q = p[2 * d + h];
      const uint32_t a = r.c[2 * h], b = r.c[2 * h + 1];
      float xi = step_uniform(a);
      if (q.weight < ph.threshold) roulette(q, xi, waiting, ph, dv);
      fly_absorb_scatter(q, xi, a, b, ph, column, threads);
    }
  }
}
