constexpr int kInFlight = 6;  // photons per thread at a time (a multiple of 3)

// One round: an interaction of each photon in flight, 42 random bits each (one Philox4x32-7
// draw per three photons; the counter is (draw, thread, tag, thread >> 32): with the constant
// tag in word 2 the first round's second multiply folds away). The roulette is a branch per
// slot: a warp takes it when any of its 32 lanes has that slot below the threshold (1.5 % of
// interactions: 1 - 0.985^32 = 38 % of rounds), so it is kept short.
__device__ void transport_round(Photon (&p)[kInFlight], int& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Derived& dv) {
#pragma unroll
  for (int d = 0; d < kInFlight / 3; ++d) {
    const Counter r = philox4x32_7({{draw + d, thread_lo, kTagGpu, thread_hi}}, key);
#pragma unroll
    for (int h = 0; h < 3; ++h) {
      Photon& q = p[3 * d + h];
      float xi = step_uniform(r.c[h]);
      if (q.weight < dv.threshold) roulette(q, xi, waiting, dv);
      fly_absorb_scatter(q, xi, cos_theta_of(r.c[h]), cos_sin_phi(r.c[3], 11 * h), dv);
    }
  }
}
