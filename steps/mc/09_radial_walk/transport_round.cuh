// Scatter into a direction of cosine mu with the position vector, fly log2(xi) <= 0 units
// (backwards, which is the same as flying forwards with -mu: mu is symmetric), deposit into
// the thread's row. A new photon (r = 0) ignores mu, as it must.
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the counter's address is those
// bits times 8 plus row_address, which already subtracts the 0x4b000000 counters (32-bit
// arithmetic wraps). r^2 cannot round below 0: it is (r + t mu)^2 + t^2 (1 - mu^2), and
// |mu| <= 1 - 2^-11 keeps that above 9.7e-4 t^2, a thousand times the rounding of the two FMAs
// and of the approximate r (~1e-6 t^2).
__device__ void fly_absorb(Photon& p, float xi, float two_mu, const Derived& dv) {
  const float t = __log2f(xi);
  p.r2 = fmaf(t, fmaf(two_mu, p.r, t), p.r2);
  p.r = sqrt_approx(p.r2);

  const unsigned shell = min(__float_as_uint(__fmaf_rz(p.r, dv.shells_per_unit, 8388608.0f)), dv.last_shell);
  const unsigned kept = scaled(p.weight, dv.albedo);  // rounded to nearest: unbiased
  add_to_counter(shell * 8u + dv.row_address, p.weight - kept);  // deposit exactly the weight lost
  p.weight = kept;
}

constexpr int kInFlight = 8;  // photons per thread at a time (a multiple of 4)

// One round: an interaction of each photon in flight, 32 random bits each (one Philox4x32-7
// draw per four photons; the counter is (draw, thread, tag, thread >> 32): with the constant
// tag in word 2 the first round's second multiply folds away). The roulette is a branch per
// slot: a warp takes it when any of its 32 lanes has that slot below the threshold (1.5 % of
// interactions: 1 - 0.985^32 = 38 % of rounds), so it is kept short.
__device__ void transport_round(Photon (&p)[kInFlight], int& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Derived& dv) {
#pragma unroll
  for (int d = 0; d < kInFlight / 4; ++d) {
    const Counter r = philox4x32_7({{draw + d, thread_lo, kTagGpu, thread_hi}}, key);
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      Photon& q = p[4 * d + h];
      float xi = step_uniform(r.c[h]);
      if (q.weight < dv.threshold) roulette(q, xi, waiting, dv);
      fly_absorb(q, xi, two_mu(r.c[h]), dv);
    }
  }
}
