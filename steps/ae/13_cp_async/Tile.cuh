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
