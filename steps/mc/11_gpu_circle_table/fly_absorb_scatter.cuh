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
__device__ void fly_absorb_scatter(Photon& p, float xi, float cos_theta, float2 cos_sin_phi, const Derived& dv) {
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
  p.cos_phi = cos_sin_phi.x;
  p.sin_phi = cos_sin_phi.y;
}
