namespace cg = cooperative_groups;

constexpr int kN = 128;                  // the image this step makes: 128 x 128
constexpr int kCluster = 4;              // blocks per image
constexpr int kPart = kN / kCluster;     // columns (then rows) a block owns: 32
constexpr int kThreads = 512;
constexpr int kMaxBytes = 2 * kThreads;  // a sample's voltage bytes (stands x pols) a block stages
// Shared memory, float2 cells, per polarization: T (the columns between their two rounds),
// A (the transformed columns, read by the whole cluster; rows padded to 33 so that 32 threads
// reading 32 rows at one column hit 32 banks), B (the rows between their two rounds; padded).
constexpr int kRowT = kPart, kRowA = kPart + 1, kRowB = kN + 1;
constexpr int kT = kN * kRowT, kA = kN * kRowA, kB = kPart * kRowB;

// e^{+2 pi i m / 128}: the inverse transform's twiddles, made in double on the host.
__constant__ float2 c_twiddle[kN];

__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 mul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// 4-, 8- and 16-point inverse DFTs in registers, natural order: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(float2& a0, float2& a1, float2& a2, float2& a3) {
  const float2 t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const float2 t3 = make_float2(-d.y, d.x);  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(float2 (&v)[8]) {
  float2 e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const float h = 0.70710678118654752f;  // e^{i pi/4} = h (1 + i)
  o1 = make_float2(h * (o1.x - o1.y), h * (o1.x + o1.y));
  o2 = make_float2(-o2.y, o2.x);
  o3 = make_float2(-h * (o3.x + o3.y), h * (o3.x - o3.y));
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}
