// ---- The weight gradient ----

constexpr int kGradOut = 4, kGradIn = 2;  // channels per thread: its 4 x 2 x 9 sums sit in registers
constexpr int kGradThreads = 128;         // at most, per block
constexpr int kGradThreadsPerSm = 512;    // resident per SM at 118 registers (or fewer, where shared memory binds)

// A block sums, for out_groups x kGradOut output channels and in_groups x kGradIn input
// channels, its split's share of the minibatch's (image, tile of rows) items.
struct GradientGeometry {
  int out_groups = 0, in_groups = 0;  // threads: out_groups x in_groups
  int in_blocks = 0;                  // blocks along the input channels (blockIdx.x = out block x in_blocks + in block)
  int rows = 0, row_tiles = 0;        // image rows staged per item, items per image
  int splits = 0;                     // blocks along the items (blockIdx.y), each writing its own partial sums
  int d_pitch = 0, x_plane = 0;       // floats per staged channel of d_out and of the input: odd, so that
                                      // a warp reading one pixel of many channels hits as many banks
  size_t shared = 0;
};

GradientGeometry gradient_geometry(const Conv& c, int batch, int sms, int shared_per_sm) {
  GradientGeometry g;
  const int out_groups = ceil_div(c.out, kGradOut), in_groups = ceil_div(c.in, kGradIn);
  g.out_groups = std::min(out_groups, 8);
  g.in_groups = std::min(in_groups, kGradThreads / g.out_groups);
  g.out_groups = std::min(out_groups, kGradThreads / g.in_groups);  // conv1 has 2 input groups: 64 output groups
  g.rows = std::min(c.height, std::max(1, 64 / c.width));
  const auto size = [&] {
    g.d_pitch = g.rows * c.width | 1;
    g.x_plane = (g.rows + 2) * (c.width + 2) | 1;
    g.shared = size_t(g.out_groups * kGradOut * g.d_pitch + g.in_groups * kGradIn * g.x_plane) * sizeof(float);
    return g.shared;
  };
  const size_t budget = 40 * 1024;  // several blocks per SM
  while (size() > budget && g.rows > 1) --g.rows;
  while (size() > budget && g.in_groups > 1) g.in_groups = (g.in_groups + 1) / 2;
  while (size() > budget && g.out_groups > 1) g.out_groups = (g.out_groups + 1) / 2;
  if (g.shared > kSharedLimit)
    throw core::RuntimeError("" + std::to_string(c.width) + "-pixel rows do not fit a weight-gradient tile");
  g.in_blocks = ceil_div(c.in, g.in_groups * kGradIn);
  g.row_tiles = ceil_div(c.height, g.rows);
  const int channel_blocks = ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks;
  const int items = batch * g.row_tiles;
  // As many splits as fill the SMs once: one block more than fits would start a second wave.
  // (The runtime reserves 1 KB of shared memory per block.)
  const int resident = std::max(1, std::min(kGradThreadsPerSm / (g.out_groups * g.in_groups),
                                            int(size_t(shared_per_sm) / (g.shared + 1024))));
  g.splits = std::max(1, std::min(items, sms * resident / channel_blocks));
  return g;
}
