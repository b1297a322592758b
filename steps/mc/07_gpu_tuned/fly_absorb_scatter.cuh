// Positions are in units of ln 2 / mu_t, so that a step is just log2(xi) (fly_absorb_scatter),
// and the direction is kept as the sines and cosines it is made of.
struct Photon {
  float x, y, z;
  float sin_theta, cos_phi, sin_phi, cos_theta;
  unsigned weight;  // fixed point (Weights)
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0u}; }

// [1, 2) from the top 23 bits: the float 1.m with m = those bits.
__device__ float one_to_two(uint32_t bits) { return __uint_as_float(0x3f800000u | (bits >> 9)); }

// The step's uniform: 1.m - 1 + 2^-24, in (0, 1) (so the step is never 0 either).
__device__ float step_uniform(uint32_t bits) { return one_to_two(bits) + (-1.0f + 0x1p-24f); }

// sqrt on the SFU in one instruction (MUFU.SQRT); sqrtf is the IEEE sequence.
__device__ float sqrt_approx(float x) {
  float root;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(root) : "f"(x));
  return root;
}

// What the inner loop needs besides Physics, derived once per thread.
struct Derived {
  float shells_per_unit;   // -step_scale: a distance in the units above -> shell widths
  unsigned last_shell;     // float bits of 2^23 + (shells - 1)
  unsigned row_address;    // this thread's row (shared address), less 2^23 shells (see fly_absorb_scatter)
  unsigned one, albedo, threshold;        // Weights
  float survival, inv_survival, inv_end;  // p, 1 / p, 1 / (1 - p) of the roulette
  unsigned count;          // photons of this thread
};

// The roulette, decided by the step's own uniform xi. Survive if xi <= p: weight / p, and
// xi / p is again uniform on (0, 1]. Otherwise the photon ends and the slot launches the
// thread's next photon at once (weight 0 when there is none: the slot retires), flown with
// (xi - p) / (1 - p), again uniform on (0, 1] given xi > p. The new photon keeps the
// direction its predecessor had just drawn: isotropic and independent of everything the new
// photon draws, so the source is still an isotropic point (tiny_mc starts along z; in an
// infinite medium only |r| is tallied, and both give the same distribution of it).
__device__ void roulette(Photon& p, float& xi, int& waiting, const Derived& dv) {
  if (xi <= dv.survival) {
    p.weight = __float2uint_rn(__uint2float_rn(p.weight) * dv.inv_survival);  // w / p, rounded to nearest
    xi = fminf(xi * dv.inv_survival, 1.0f);
  } else {
    p.weight = waiting-- > 0 ? dv.one : 0u;  // the thread's next photon; none when waiting <= 0
    p.x = p.y = p.z = 0.0f;
    xi = fminf((xi - dv.survival) * dv.inv_end, 1.0f);
  }
}

// Fly log2(xi) <= 0 units: backwards along the direction, which is as isotropic as the
// direction itself. Deposit into the thread's row, scatter with the bits a, b.
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the counter's address is those
// bits times 8 plus row_address, which already subtracts the 0x4b000000 counters (32-bit
// arithmetic wraps).
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Derived& dv) {
  const float t = __log2f(xi);
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r = sqrt_approx(p.x * p.x + p.y * p.y + p.z * p.z);
  const unsigned shell = min(__float_as_uint(__fmaf_rz(r, dv.shells_per_unit, 8388608.0f)), dv.last_shell);
  const unsigned kept = scaled(p.weight, dv.albedo);  // rounded to nearest: unbiased
  add_to_counter(shell * 8u + dv.row_address, p.weight - kept);  // deposit exactly the weight lost
  p.weight = kept;

  // cos(theta) = 2 (1.m) - 3 with m = bits 1..22 of b and a last 1: (2j + 1) 2^-22 - 1,
  // symmetric and never +-1. phi: bits 23..31 of b and 0..8 of a (one funnel shift puts
  // them side by side), 18 bits; the step took a's top 23.
  p.cos_theta = fmaf(2.0f, __uint_as_float((b & 0x007ffffeu) | 0x3f800001u), -3.0f);
  p.sin_theta = sqrt_approx(fmaf(-p.cos_theta, p.cos_theta, 1.0f));
  const uint32_t phi_bits = __funnelshift_l(b, a, 14) & 0x007fffe0u;
  const float phi = fmaf(__uint_as_float(0x3f800000u | phi_bits), 2.0f * core::kPiF, -3.0f * core::kPiF);  // [-pi, pi)
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}
