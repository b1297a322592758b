// ---- The copies and the products ----

// Copies 16 bytes from global to shared memory through a register; with `valid` false it
// writes 16 zero bytes and reads nothing (the padding of the convolution). Both addresses must
// be 16-byte aligned.
__device__ __forceinline__ void copy16(float* shared_to, const float* global_from, bool valid) {
  *reinterpret_cast<float4*>(shared_to) =
      valid ? *reinterpret_cast<const float4*>(global_from) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
// d += a b for one value of k of a thread's four sums in a 16 x 8 part of the product: rows g
// and g + 8 (a[0], a[1]) by columns 2t and 2t + 1 (b[0], b[1]), for lane g x 4 + t of its warp.
// (These are the places mma.sync.m16n8k8 gives the lane's sums: 12.)
//   d[0] = D[g][2t], d[1] = D[g][2t + 1], d[2] = D[g + 8][2t], d[3] = D[g + 8][2t + 1]
__device__ __forceinline__ void fma_part(float (&d)[4], const float (&a)[2], const float (&b)[2]) {
  d[0] += a[0] * b[0];
  d[1] += a[0] * b[1];
  d[2] += a[1] * b[0];
  d[3] += a[1] * b[1];
}
// ---- Tiles ----

// A block computes a kM x kN tile of the product; each of its warps a kWarpM x kWarpN part of
// it as (kWarpM / 16) x (kWarpN / 8) parts of 16 x 8 (fma_part), whose sums stay in registers.
template <int M, int N, int WarpM, int WarpN, int MinBlocks>
struct Tile {
  static constexpr int kM = M, kN = N, kWarpM = WarpM, kWarpN = WarpN;
  static constexpr int kWarpsM = M / WarpM, kWarps = kWarpsM * (N / WarpN), kThreads = 32 * kWarps;
  static constexpr int kFragsM = WarpM / 16, kFragsN = WarpN / 8;
  static constexpr int kMinBlocks = MinBlocks;  // per SM, for __launch_bounds__ (registers)
  static_assert(M % WarpM == 0 && N % WarpN == 0 && WarpM % 16 == 0 && WarpN % 8 == 0, "whole 16 x 8 parts");
};
