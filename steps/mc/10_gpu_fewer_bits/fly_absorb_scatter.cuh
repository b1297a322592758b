// Positions are in units of ln 2 / mu_t, so that a step is just log2(xi) (fly_absorb_scatter),
// and the direction is kept as the sines and cosines it is made of.
struct Photon {
  float x, y, z;
  float sin_theta, cos_phi, sin_phi, cos_theta;
  unsigned weight;  // fixed point (Weights)
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0u}; }

// A draw's four words w0..w3 feed three interactions: interaction h takes its step's uniform
// and cos(theta) from w_h, and its phi from w3 (bits 0..9, 11..20, 22..31).

// The step's uniform from bits 11..31 (m): (2m + 1) 2^-22, in (0, 1), never 0 or 1. The float
// 1 + m 2^-23 is one LEA.HI (0x3f800000 + bits >> 11), and 4 (1 + m 2^-23) - 4 + 2^-22 is
// exact in one FFMA.
__device__ float step_uniform(uint32_t bits) {
  return fmaf(__uint_as_float(0x3f800000u + (bits >> 11)), 4.0f, -4.0f + 0x1p-22f);
}

// cos(theta) from bits 0..10 (j): (2j + 1) / 2048 - 1 = j 2^-10 + (2^-11 - 1), symmetric and
// never +-1: a mask, an integer-to-float conversion (I2FP, exact) and one exact FFMA.
__device__ float cos_theta_of(uint32_t bits) { return fmaf(float(bits & 0x7ffu), 0x1p-10f, 0x1p-11f - 1.0f); }

// phi from 10 bits k of w3 at bit Low: (2k + 1) pi / 1024 - pi, in (-pi, pi). The fields start
// at 0, 11 and 22, so the first needs only a mask and the last only a shift.
template <int Low>
__device__ float phi_of(uint32_t w3) {
  const uint32_t k = Low + 10 < 32 ? (w3 >> Low) & 0x3ffu : w3 >> Low;
  return fmaf(float(k), core::kPiF / 512.0f, core::kPiF / 1024.0f - core::kPiF);
}

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
// direction itself. Deposit into the thread's row, scatter into (cos_theta, phi).
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the counter's address is those
// bits times 8 plus row_address, which already subtracts the 0x4b000000 counters (32-bit
// arithmetic wraps).
__device__ void fly_absorb_scatter(Photon& p, float xi, float cos_theta, float phi, const Derived& dv) {
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

  p.cos_theta = cos_theta;
  p.sin_theta = sqrt_approx(fmaf(-cos_theta, cos_theta, 1.0f));
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}
