constexpr int kN = 64;            // the image this step makes: 64 x 64 (128 x 128 is 10's)
constexpr int kRow = kN + 1;      // a grid row in shared memory, padded: rows and columns both conflict-free
constexpr int kThreads = kN * 8;  // a thread per (row or column, eighth): 512

// A cell of both polarizations: re = (X.re, Y.re), im = (X.im, Y.im).
struct Pair {
  float2 re, im;
};

// e^{+2 pi i m / 64}: the inverse transform's twiddles, made in double on the host.
__constant__ float2 c_twiddle[kN];

// On a float2 of the two polarizations, element by element.
__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 scale2(float2 a, float h) { return make_float2(a.x * h, a.y * h); }
__device__ __forceinline__ float2 neg2(float2 a) { return make_float2(-a.x, -a.y); }

__device__ __forceinline__ Pair add(Pair a, Pair b) { return {add(a.re, b.re), add(a.im, b.im)}; }
__device__ __forceinline__ Pair sub(Pair a, Pair b) { return {sub(a.re, b.re), sub(a.im, b.im)}; }
__device__ __forceinline__ Pair twiddle(Pair a, int m) {  // a e^{2 pi i m / 64}, both polarizations at once
  const float2 w = c_twiddle[m];  // (cos, sin)
  return {sub(scale2(a.re, w.x), scale2(a.im, w.y)), add(scale2(a.re, w.y), scale2(a.im, w.x))};
}

// 4- and 8-point inverse DFTs in registers, natural order in and out: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(Pair& a0, Pair& a1, Pair& a2, Pair& a3) {
  const Pair t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const Pair t3 = {neg2(d.im), d.re};  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(Pair (&v)[8]) {
  Pair e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const float h = 0.70710678118654752f;  // e^{i pi/4} = h (1 + i)
  o1 = {scale2(sub(o1.re, o1.im), h), scale2(add(o1.re, o1.im), h)};
  o2 = {neg2(o2.im), o2.re};
  o3 = {neg2(scale2(add(o3.re, o3.im), h)), scale2(sub(o3.re, o3.im), h)};
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}
