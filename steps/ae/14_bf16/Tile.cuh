// The same for two floats already rounded to bfloat16: their upper halves, moved (no rounding).
__device__ __forceinline__ uint32_t pack_rounded(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}
// d += a b as mma_tf32, in BF16 and with k = 16: a 16x16 tile of a, a 16x8 tile of b, two
// bfloat16 values per register, the lower k in the low half:
//   a[0] = A[g][2t, 2t + 1], a[1] = A[g + 8][2t, 2t + 1], a[2] = A[g][2t + 8, 2t + 9], a[3] = A[g + 8][2t + 8, 2t + 9]
//   b[0] = B[2t, 2t + 1][g], b[1] = B[2t + 8, 2t + 9][g]
//   d as for mma_tf32
// (PTX ISA, "Matrix Fragments for mma.m16n8k16", .bf16).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- Tiles ----

// A block computes a kM x kN tile of the product; each of its warps a kWarpM x kWarpN part of
// it as (kWarpM / 16) x (kWarpN / 8) mma tiles, whose sums stay in registers.
template <int M, int N, int WarpM, int WarpN, int MinBlocks>
struct Tile {
  static constexpr int kM = M, kN = N, kWarpM = WarpM, kWarpN = WarpN;
  static constexpr int kWarpsM = M / WarpM, kWarps = kWarpsM * (N / WarpN), kThreads = 32 * kWarps;
  static constexpr int kFragsM = WarpM / 16, kFragsN = WarpN / 8;
  static constexpr int kMinBlocks = MinBlocks;  // per SM, for __launch_bounds__ (registers)
  static_assert(M % WarpM == 0 && N % WarpN == 0 && WarpM % 16 == 0 && WarpN % 8 == 0, "whole mma tiles");
};
