// ---- The PTX instructions this step is built on ----

// Copies 16 bytes from global to shared memory without passing through registers; with
// `valid` false it writes 16 zero bytes and reads nothing (the padding of the convolution).
// Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async16(float* shared_to, const float* global_from, bool valid) {
  const unsigned to = unsigned(__cvta_generic_to_shared(shared_to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global_from), "r"(valid ? 16 : 0)
               : "memory");
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `kPending` of this thread's groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}
// Rounds to TF32 (10 mantissa bits) to nearest, ties away from zero; the tensor core would
// otherwise just drop the low 13 bits.
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// d += a b for a 16x8 tile of d, a 16x8 tile of a (row-major) and an 8x8 tile of b (column-major),
// spread over the 32 threads of a warp (g = lane / 4, t = lane % 4):
//   a[0] = A[g][t], a[1] = A[g + 8][t], a[2] = A[g][t + 4], a[3] = A[g + 8][t + 4]
//   b[0] = B[t][g], b[1] = B[t + 4][g]
//   d[0] = D[g][2t], d[1] = D[g][2t + 1], d[2] = D[g + 8][2t], d[3] = D[g + 8][2t + 1]
// (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
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
