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

// What the inner loop needs besides Physics, derived once per thread.
struct Derived {
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
__device__ void roulette(Photon& p, float& xi, float& waiting, const Physics& ph, const Derived& dv) {
  if (xi <= dv.survival) {
    p.weight *= dv.inv_survival;
    xi = fminf(xi * dv.inv_survival, 1.0f);
  } else {
    p.weight = fminf(waiting, 1.0f);  // the thread's next photon; 0 when none is waiting
    waiting -= p.weight;
    p.x = p.y = p.z = 0.0f;
    xi = fminf((xi - dv.survival) * dv.inv_end, 1.0f);
  }
}

// Fly log2(xi) * step_scale, deposit into the thread's column (column = threadIdx.x -
// 2^23 threads, see below), scatter with the bits a, b (their low 9 bits each make phi).
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and rsqrt,
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
  const float phi = fmaf(__uint_as_float(0x3f800000u | (phi_bits << 5)), 2.0f * core::kPiF, -3.0f * core::kPiF);  // [-pi, pi)
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}
