constexpr int kN = 128;                // the image this step makes: 128 x 128
constexpr int kParts = 4;              // blocks per image, each a quarter of the rows
constexpr int kRows = kN / kParts;     // rows a block makes: 32
constexpr int kRow = kN + 1;           // a row of B in shared memory, padded: rows and columns both conflict-free
constexpr int kThreads = 512;

// A cell of both polarizations: re = (X.re, Y.re), im = (X.im, Y.im) (09's).
struct Pair {
  half2 re, im;
};

// e^{+2 pi i m / 128}, each part in both halves, made in double on the host and rounded once.
struct Twiddle {
  half2 cos, sin;  // 8 bytes: one constant load a twiddle
};
__constant__ Twiddle c_twiddle[kN];

__device__ __forceinline__ Pair add(Pair a, Pair b) { return {__hadd2(a.re, b.re), __hadd2(a.im, b.im)}; }
__device__ __forceinline__ Pair sub(Pair a, Pair b) { return {__hsub2(a.re, b.re), __hsub2(a.im, b.im)}; }
__device__ __forceinline__ Pair twiddle(Pair a, int m) {  // a e^{2 pi i m / 128}, both polarizations at once
  const Twiddle w = c_twiddle[m];
  const half2 c = w.cos, s = w.sin;
  return {__hfma2(a.re, c, __hneg2(__hmul2(a.im, s))), __hfma2(a.re, s, __hmul2(a.im, c))};
}

// 4-, 8- and 16-point inverse DFTs in registers, natural order: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(Pair& a0, Pair& a1, Pair& a2, Pair& a3) {
  const Pair t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const Pair t3 = {__hneg2(d.im), d.re};  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(Pair (&v)[8]) {
  Pair e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const half2 h = __float2half2_rn(0.70710678118654752f);  // e^{i pi/4} = h (1 + i)
  o1 = {__hmul2(h, __hsub2(o1.re, o1.im)), __hmul2(h, __hadd2(o1.re, o1.im))};
  o2 = {__hneg2(o2.im), o2.re};
  o3 = {__hneg2(__hmul2(h, __hadd2(o3.re, o3.im))), __hmul2(h, __hsub2(o3.re, o3.im))};
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}
