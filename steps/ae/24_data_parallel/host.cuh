// Which tiles a product uses (--tiles): 0 by the size of the product, 1 always SmallTile,
// 2 always BigTile (NarrowTile for at most 8 columns in every case).
enum TileChoice { kTilesAuto = 0, kTilesSmall = 1, kTilesBig = 2 };
enum class TileKind { big, small, narrow };
const char* tile_name(TileKind k) { return k == TileKind::big ? "128x128" : k == TileKind::small ? "64x64" : "128x8"; }

// ---- Data parallelism: a copy of the weights on every rank, trained alike ----

// A 64-bit fingerprint of the weights: the sum, modulo 2^64, of a hash of each weight's index
// and bits (SplitMix64's finalizer, a bijection of 64-bit words). A sum of integers does not
// depend on its order, so equal weights give equal fingerprints on every rank; one bit changed
// anywhere changes it (two changes cancel with a chance of 2^-64). *fingerprint is zero before.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__global__ void fingerprint_weights(size_t n, const float* __restrict__ params, unsigned long long* __restrict__ fingerprint) {
  __shared__ unsigned long long warps[32];
  unsigned long long h = 0;
  for (size_t i = global_index(); i < n; i += size_t(gridDim.x) * blockDim.x)
    h += splitmix64(i << 32 | __float_as_uint(params[i]));  // n < 2^32
  for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = h;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block = 0;
    for (int w = 0; w < int(blockDim.x / 32); ++w) block += warps[w];
    atomicAdd(fingerprint, block);
  }
}

// How the gradients are summed over the ranks (--buckets): all at once after the backward pass
// (one), or each layer's as soon as the backward pass has written it (layers).
enum Buckets { kOneBucket = 0, kLayerBuckets = 1 };

// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh), on this rank's share of each
// minibatch, the gradients summed over the ranks before SGD. SGD updates
// the float master weights in the reference layout; the products read the rounded copies
// arrange_weights makes. O: the tensor cores' operands (--precision); everything else is the
// same for both.
template <Operands O>
class ImplicitGemm final : public NhwcLayers {
 public:
  ImplicitGemm(int threads, int tiles, int buckets) : NhwcLayers(threads), tiles_(tiles), buckets_(buckets) {}
  ~ImplicitGemm() override {
    if (!reducing_) return;
    cudaEventDestroy(made_);
    cudaEventDestroy(reduced_);
    cudaStreamDestroy(reducing_);
  }

  // --batch is the minibatch over all ranks, split evenly, so that any number of GPUs trains on
  // the same minibatches (and the check's gradients are the same sums). The check's minibatches
  // (4 images, or one a rank) may split unevenly: the loss divides by the whole minibatch either way.
  void load(const Problem& p, const std::vector<float>& initial, int batch) override {
    const core::Ranks& world = core::ranks();
    if (p.batch % world.size)
      throw core::UsageError("--batch " + std::to_string(p.batch) + ": the minibatch over all ranks, split evenly; want a multiple of the " +
                             std::to_string(world.size) + " ranks");
    if (batch < world.size)
      throw core::UsageError("minibatches of " + std::to_string(batch) + " images leave a rank of the " +
                             std::to_string(world.size) + " without one");
    whole_ = batch;
    first_ = int(long(batch) * world.rank / world.size);
    const int mine = int(long(batch) * (world.rank + 1) / world.size) - first_;
    comm_ = core::world_communicator();  // the first call waits for every rank
    if (!reducing_) {
      // A stream of its own for the sums, not ordered after the kernels' (the legacy default
      // stream, which a blocking stream would wait for), and first to get SMs as blocks finish.
      int lowest = 0, highest = 0;
      CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
      CUDA_CHECK(cudaStreamCreateWithPriority(&reducing_, cudaStreamNonBlocking, highest));
      CUDA_CHECK(cudaEventCreateWithFlags(&made_, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&reduced_, cudaEventDisableTiming));
      barrier_.resize(1);
      CUDA_CHECK(cudaMemset(barrier_.data(), 0, sizeof(float)));
    }
    NhwcLayers::load(p, initial, mine);
    reserve_fingerprints(std::max(p.steps(), 2));
    CUDA_CHECK(cudaMemset(fingerprints_.data(), 0, fingerprints_.size() * sizeof(unsigned long long)));
  }

  // All ranks loaded before any rank's timed training starts: a one-float sum over the ranks.
  void wait_for_ranks() override {
    NCCL_CHECK(ncclAllReduce(barrier_.data(), barrier_.data(), 1, ncclFloat, ncclSum, comm_, reducing_));
    CUDA_CHECK(cudaStreamSynchronize(reducing_));
  }

  // LayeredTraining's step on this rank's images of the minibatch; its backward pass starts the
  // buckets' sums (conv_backward), and SGD waits for the last of them.
  void train(long long steps) override {
    state_.reserve(t_ + steps);
    reserve_fingerprints(t_ + steps);
    const size_t n = state_.params.size();
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = data_.data() + (minibatch_start(t_, whole_, p_->images()) + first_) * image_floats();
      forward(x, batch_);
      backward(x, state_.losses() + t_);
      CUDA_CHECK(cudaEventRecord(reduced_, reducing_));
      CUDA_CHECK(cudaStreamWaitEvent(stream_, reduced_, 0));
      launch(sgd, n, n, float(p_->lr), float(p_->momentum), state_.gradient.data(), state_.velocity.data(),
             state_.params.data());
      launch_grid(fingerprint_weights, dim3(unsigned(sms_)), dim3(threads_), 0, n, state_.params.data(),
                  fingerprints_.data() + t_);
    }
  }

  // The weights and the summed gradient (the same on every rank), the losses summed over the
  // ranks (each rank's is its images' share of the minibatch's mean), and the ranks' fingerprints
  // after every step compared: their lowest against their highest.
  void store(Trained& out) override {
    state_.store(out, t_);
    out.replicas_compared = "a 64-bit fingerprint of the weights after every training step, the lowest and the highest of the " +
                            std::to_string(core::ranks().size) + " ranks'";
    out.replicas_differ.clear();
    if (!t_) return;
    const size_t steps = size_t(t_);
    CUDA_CHECK(cudaEventRecord(made_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(reducing_, made_, 0));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclAllReduce(state_.losses(), summed_losses_.data(), steps, ncclFloat, ncclSum, comm_, reducing_));
    NCCL_CHECK(ncclAllReduce(fingerprints_.data(), lowest_.data(), steps, ncclUint64, ncclMin, comm_, reducing_));
    NCCL_CHECK(ncclAllReduce(fingerprints_.data(), highest_.data(), steps, ncclUint64, ncclMax, comm_, reducing_));
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaStreamSynchronize(reducing_));
    std::vector<unsigned long long> lowest(steps), highest(steps);
    CUDA_CHECK(cudaMemcpy(out.losses.data(), summed_losses_.data(), steps * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lowest.data(), lowest_.data(), steps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(highest.data(), highest_.data(), steps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    for (size_t s = 0; s < steps; ++s)
      if (lowest[s] != highest[s]) {
        char range[64];
        snprintf(range, sizeof range, "%016llx to %016llx", lowest[s], highest[s]);
        out.replicas_differ = "after training step " + std::to_string(s + 1) + " of " + std::to_string(steps) +
                              " (fingerprints " + range + ")";
        break;
      }
  }

  std::optional<Accuracy> accuracy() const override { return O == Operands::bf16 ? Accuracy::bf16 : Accuracy::tf32; }

  void describe(core::Fields& params) const override {
    LayeredTraining::describe(params);
    params.set("tiles", tiles_);
    if (!p_) return;
    // What the choice makes of a rank's share of the problem's minibatch (the timed run's;
    // validation loads the step again with smaller ones): the tiles of each product, and the
    // weight gradient's splits.
    const int mine = p_->batch / core::ranks().size;
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, mine);
      params.append("gemm")
          .set("forward", tile_name(conv_tile(mine, L_[l], out_ch_[l])))
          .set("input_gradient", l ? tile_name(conv_tile(mine, L_[l], in_ch_[l])) : "none")
          .set("weight_gradient", tile_name(plan.kind))
          .set("splits", plan.splits)
          .set("pooled_epilogue", l < kPooled && pooled_tile(mine, l));
    }
    params.append("gemm")
        .set("forward", "direct")
        .set("input_gradient", "direct")
        .set("weight_gradient", "direct")
        .set("splits", conv5_splits(mine));
  }

 private:
  void allocate_more(int batch) override {
    if (!configured_) configure_kernels();
    // The arranged weights: each layer's two orders at 16-byte aligned offsets, zero padding.
    size_t arranged = 0;
    for (int l = 0; l < kLayers; ++l) {
      arranged_at_[l] = arranged;
      arranged += size_t(out_ch_[l]) * 9 * in_ch_[l];
    }
    forward_weights_.resize(arranged);
    backward_weights_.resize(arranged);
    CUDA_CHECK(cudaMemset(forward_weights_.data(), 0, arranged * sizeof(float)));
    CUDA_CHECK(cudaMemset(backward_weights_.data(), 0, arranged * sizeof(float)));
    // The weight gradients' splits, and room for their partial sums (and the loss's before them).
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
    size_t partials = loss_partials(batch);
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, batch);
      weight_tile_[l] = plan.kind;
      splits_[l] = plan.splits;
      partials = std::max(partials, size_t(splits_[l]) * (size_t(9) * in_ch_[l] * out_ch_[l] + out_ch_[l]));
    }
    // conv5: its direct kernels' shape, the gradient of a4 they write (u4 and its gradient are
    // never made), and its weight gradient's splits.
    const Conv& c5 = L_[kConv5];
    if (c5.out != kOut5 || out_ch_[kConv5] != 4 || in_ch_[kConv5] > kThreads5 || in_ch_[kConv5] != out_ch_[kConv5 - 1] ||
        c5.height != 2 * L_[kConv5 - 1].height || c5.width != 2 * L_[kConv5 - 1].width)
      throw core::UsageError("conv5's direct kernels want 3 outputs, at most 256 inputs, after x2 upsampling");
    d_a4_.resize(size_t(batch) * L_[kConv5 - 1].pixels() * out_ch_[kConv5 - 1]);
    // The winners of a forward pass of capacity_ images (training's minibatch, or reconstruct()'s).
    for (int l = 0; l < kPooled; ++l) winners_[l].resize(size_t(capacity_) * L_[l].pixels() / 4 * out_ch_[l]);
    partials = std::max(partials, size_t(conv5_splits(batch)) * (size_t(kTaps5) * c5.in + kOut5));
    partials_.resize(partials);
  }

  static constexpr int kConv5 = kLayers - 1;  // conv5's index

  Conv5Shape conv5_shape(int n) const {
    const Conv& c4 = L_[kConv5 - 1];
    Conv5Shape s{n, c4.height, c4.width, in_ch_[kConv5], L_[kConv5].in, 1};
    while (s.band < 8 && s.h % (2 * s.band) == 0 && 2 * s.band * s.w <= 1024) s.band *= 2;
    return s;
  }
  // Blocks of conv5_backward: one wave (a row of a4 at least each).
  int conv5_splits(int batch) const {
    return int(std::min(long(batch) * L_[kConv5 - 1].height, long(conv5_resident_) * sms_));
  }

  // The GEMM kernels may stage more than the 48 KB of shared memory a block gets without asking.
  void configure_kernels() {
    const auto allow = [](const void* kernel, size_t bytes) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    };
    allow(reinterpret_cast<const void*>(conv_gemm<BigTile, O>), conv_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<SmallTile, O>), conv_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<NarrowTile, O>), conv_shared_bytes<NarrowTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<BigTile, O>), weight_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>), weight_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>), weight_shared_bytes<NarrowTile>());
    // How many blocks of each split kernel an SM holds at once (registers, shared memory and
    // threads, as the compiled kernels need them): a wave is that times the SMs.
    const auto resident = [](const void* kernel, int threads, size_t bytes) {
      int blocks = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, bytes));
      return std::max(blocks, 1);
    };
    weight_resident_[int(TileKind::big)] = resident(reinterpret_cast<const void*>(weight_gemm<BigTile, O>),
                                                    BigTile::kThreads, weight_shared_bytes<BigTile>());
    weight_resident_[int(TileKind::small)] = resident(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>),
                                                      SmallTile::kThreads, weight_shared_bytes<SmallTile>());
    weight_resident_[int(TileKind::narrow)] = resident(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>),
                                                       NarrowTile::kThreads, weight_shared_bytes<NarrowTile>());
    conv5_resident_ = resident(reinterpret_cast<const void*>(conv5_backward), kThreads5,
                               size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float));
    configured_ = true;
  }

  // The forward and input-gradient products: pixels x `columns` channels. Big tiles when they
  // alone fill the GPU at two blocks per SM (7/8 of a wave or more); small ones otherwise, four
  // times as many blocks.
  TileKind conv_tile(int n, const Conv& c, int columns) const {
    if (columns <= 8) return TileKind::narrow;
    if (tiles_ != kTilesAuto) return tiles_ == kTilesBig ? TileKind::big : TileKind::small;
    const long blocks = long(ceil_div(int(n * c.pixels()), BigTile::kM)) * ceil_div(columns, BigTile::kN);
    return blocks * 8 >= 7L * 2 * sms_ ? TileKind::big : TileKind::small;
  }

  void convolve(int n, const Conv& c, int in_ch, int out_ch, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out, float* pooled = nullptr, unsigned char* winners = nullptr) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu, pooled, winners};
    const int M = n * int(c.pixels());
    switch (conv_tile(n, c, out_ch)) {
      case TileKind::big:
        return launch_conv<BigTile>(M, s, in, weight, bias, out);
      case TileKind::small:
        return launch_conv<SmallTile>(M, s, in, weight, bias, out);
      case TileKind::narrow:
        return launch_conv<NarrowTile>(M, s, in, weight, bias, out);
    }
  }
  template <class T>
  void launch_conv(int M, const ConvShape& s, const float* in, const float* weight, const float* bias, float* out) {
    const dim3 grid(unsigned(ceil_div(M, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)));
    launch_grid(conv_gemm<T, O>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // The weight gradient of layer l: (9 in) x out. Big tiles where both sides fill them; the
  // pixel sum is split into as many parts as keep the blocks within one wave (the blocks all
  // SMs hold at once), with at least 4 staged tiles per split. (14 to 21 rounded the splits
  // up to about twice the SMs' blocks: 270 blocks for a wave of 264 at batch 256, a second
  // wave of 6 blocks that took as long as the first.)
  struct WeightPlan {
    TileKind kind;
    int splits;
  };
  WeightPlan weight_plan(int l, int batch) const {
    const int M = 9 * in_ch_[l], N = out_ch_[l];
    TileKind kind = TileKind::small;
    if (N <= 8) kind = TileKind::narrow;
    else if (tiles_ == kTilesBig || (tiles_ == kTilesAuto && M >= BigTile::kM && N >= BigTile::kN)) kind = TileKind::big;
    const int tm = kind == TileKind::big ? BigTile::kM : kind == TileKind::small ? SmallTile::kM : NarrowTile::kM;
    const int tn = kind == TileKind::big ? BigTile::kN : kind == TileKind::small ? SmallTile::kN : NarrowTile::kN;
    const int blocks = ceil_div(M, tm) * ceil_div(N, tn);
    const int wave = sms_ * weight_resident_[int(kind)];
    const int tiles = ceil_div(batch * int(L_[l].pixels()), kK);
    return {kind, std::max(1, std::min(wave / blocks, tiles / 4))};
  }

  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const WeightShape s{batch_, c.height, c.width, in_ch_[l], out_ch_[l], splits_[l]};
    switch (weight_tile_[l]) {
      case TileKind::big:
        launch_weight<BigTile>(s, in, d_out);
        break;
      case TileKind::small:
        launch_weight<SmallTile>(s, in, d_out);
        break;
      case TileKind::narrow:
        launch_weight<NarrowTile>(s, in, d_out);
        break;
    }
    launch(gather_weight_gradient, size_t(9) * s.in_ch * s.out_ch + s.out_ch, c.in, c.out, s.in_ch, s.out_ch, s.splits,
           partials_.data(), state_.gradient.data() + c.weight);  // the bias follows its weights
  }
  template <class T>
  void launch_weight(const WeightShape& s, const float* in, const float* d_out) {
    const dim3 grid(unsigned(ceil_div(9 * s.in_ch, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)), unsigned(s.splits));
    launch_grid(weight_gemm<T, O>, grid, dim3(T::kThreads), weight_shared_bytes<T>(), s, in, d_out, partials_.data());
  }

  // Before every forward pass: the weights rounded and arranged, all layers in one launch.
  void prepare(int) override {
    AllWeights all;
    size_t most = 0;
    for (int l = 0; l < kLayers; ++l) {
      all.layer[l] = {L_[l].in, L_[l].out, in_ch_[l], out_ch_[l], state_.params.data() + L_[l].weight,
                      forward_weights_.data() + arranged_at_[l], backward_weights_.data() + arranged_at_[l]};
      most = std::max(most, L_[l].weight_count());
    }
    // conv5's direct kernels read the float master weights: only the products' layers.
    launch_grid(arrange_weights<O>, dim3(unsigned((most + threads_ - 1) / threads_), kConv5), dim3(threads_), 0, all);
  }

  // Bias and ReLU in the product's epilogue. conv5 reads a4 (a4_), not its upsampled copy
  // `in` (u4), which upsample() no longer writes.
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    if (l == kConv5) {
      const Conv5Shape s = conv5_shape(n);
      const int plane = (s.band + 2) * (s.w + 2) + 1;
      launch_grid(conv5_forward, dim3(unsigned(s.h / s.band), unsigned(n)), dim3(unsigned(s.band * s.w)),
                  size_t(kChunk5) * (plane + kRow5) * sizeof(float), s, a4_.data(),
                  state_.params.data() + L_[l].weight, state_.params.data() + L_[l].bias, out);
      return;
    }
    // conv1 and conv2: pooled in the epilogue where the tile's warps hold whole windows; a1 (a2)
    // is then not written, and pool() and pool_backward() use what the epilogue kept.
    pooled_[l] = l < kPooled && pooled_tile(n, l);
    float* pooled = !pooled_[l] ? nullptr : l == 0 ? p1_.data() : p2_.data();
    convolve(n, L_[l], in_ch_[l], out_ch_[l], in, forward_weights_.data() + arranged_at_[l], state_.params.data() + L_[l].bias,
             L_[l].out, relu, out, pooled, pooled ? winners_[l].data() : nullptr);
  }

  // Whether layer l's product at n images can pool in its epilogue: widths of 8, 16 or 32
  // whose window pairs of rows fit a warp's rows, whole groups of 8 channels.
  bool pooled_tile(int n, int l) const {
    const int w = L_[l].width, columns = out_ch_[l];
    if ((w != 8 && w != 16 && w != 32) || L_[l].height % 2 || columns % 8) return false;
    const TileKind kind = conv_tile(n, L_[l], columns);
    const int warp_rows = kind == TileKind::big ? BigTile::kWarpM : kind == TileKind::small ? SmallTile::kWarpM : NarrowTile::kWarpM;
    return warp_rows % (2 * w) == 0;
  }
  void pool(int l, int n, const float* a, float* pooled) override {
    if (!pooled_[l]) NhwcLayers::pool(l, n, a, pooled);
  }
  void pool_backward(int l, const float* a, const float* pooled, const float* d_pooled, float* d_a) override {
    if (!pooled_[l]) return NhwcLayers::pool_backward(l, a, pooled, d_pooled, d_a);
    const size_t quads = size_t(batch_) * L_[l].pixels() / 4 * out_ch_[l] / 4;
    launch(unpool_winners, quads, quads, L_[l].height, L_[l].width, out_ch_[l], winners_[l].data(), d_pooled, d_a);
  }

  // Upsampling a4 is left to conv5, which reads a4 itself.
  void upsample(int l, int n, const float* a, float* up) override {
    if (l != kConv5 - 1) NhwcLayers::upsample(l, n, a, up);
  }
  // conv5's backward pass ends at the gradient of a4 (d_a4_), through upsampling and conv4's
  // ReLU: nothing is left for upsample_backward, and conv4's backward pass reads d_a4_.
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    if (l != kConv5 - 1) NhwcLayers::upsample_backward(l, d_up, a, d_a);
  }

  // The weight and bias gradients of layer l, and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    if (l == kConv5) {
      const int splits = conv5_splits(batch_);
      const size_t count = size_t(kTaps5) * L_[l].in + kOut5;
      launch_grid(conv5_backward, dim3(unsigned(splits)), dim3(kThreads5), size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float),
                  conv5_shape(batch_), a4_.data(), d_out, state_.params.data() + L_[l].weight, d_a4_.data(), partials_.data());
      launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                  count, splits, partials_.data(), state_.gradient.data() + L_[l].weight);  // the bias follows its weights
      reduce(l);
      return;
    }
    if (l == kConv5 - 1) d_out = d_a4_.data();
    weight_gradient(l, in, d_out);
    reduce(l);  // beside the input gradient's product and the layers below
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  // Layer l's weight and bias gradients are written: the sum over the ranks of their bucket
  // starts on the reducing stream once this stream gets there (in place: every rank ends with
  // the sum). With one bucket, all of them once conv1's are written.
  void reduce(int l) {
    if (buckets_ == kOneBucket && l != 0) return;
    const size_t from = buckets_ == kOneBucket ? 0 : L_[l].weight;
    const size_t to = buckets_ == kOneBucket ? state_.gradient.size() : L_[l].bias + L_[l].out;
    float* gradient = state_.gradient.data() + from;
    CUDA_CHECK(cudaEventRecord(made_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(reducing_, made_, 0));
    NCCL_CHECK(ncclAllReduce(gradient, gradient, to - from, ncclFloat, ncclSum, comm_, reducing_));
  }

  // NhwcLayers' loss over the whole minibatch: this rank's squared errors and d_y are divided by
  // the outputs of all ranks' images, so that their sum over the ranks is the minibatch's mean.
  void loss_gradient(const float* x, float*, float* d_y, float* loss) override {
    const size_t outputs = size_t(whole_) * p_->data->image_size(), stored = size_t(batch_) * L_[4].pixels() * image_ch_;
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    const unsigned blocks = unsigned((stored + threads_ - 1) / threads_);
    launch_grid(ae::loss_gradient, dim3(blocks), dim3(threads_), threads_ * sizeof(float), stored, p_->data->channels,
                image_ch_, scale, mean, d_y, x, partials_.data());
    launch_grid(sum_partials, dim3(1), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float), size_t(1), int(blocks),
                partials_.data(), loss);
  }

  // Room for the fingerprints of `steps` training steps since load() (zero until trained,
  // those already made kept), and for their and the losses' sums over the ranks.
  void reserve_fingerprints(long long steps) {
    if (size_t(steps) <= fingerprints_.size()) return;
    std::vector<unsigned long long> kept(fingerprints_.size());
    fingerprints_.download(kept.data());
    kept.resize(size_t(steps), 0);
    fingerprints_.upload(kept.data(), kept.size());
    lowest_.resize(kept.size()), highest_.resize(kept.size()), summed_losses_.resize(kept.size());
  }

  int tiles_;
  int buckets_;
  int whole_ = 0, first_ = 0;  // the minibatch over all ranks, and this rank's first image of it (batch_: its images)
  ncclComm_t comm_ = nullptr;
  cudaStream_t reducing_ = nullptr;          // the sums over the ranks
  cudaEvent_t made_ = nullptr, reduced_ = nullptr;  // a bucket's gradients written; the last sum done
  core::DeviceArray<float> barrier_;         // wait_for_ranks()'s one float
  core::DeviceArray<unsigned long long> fingerprints_, lowest_, highest_;  // by training step since load()
  core::DeviceArray<float> summed_losses_;
  bool configured_ = false;
  int sms_ = 0;
  std::array<int, 3> weight_resident_{};  // blocks per SM of weight_gemm, by TileKind
  int conv5_resident_ = 1;                // and of conv5_backward
  std::array<int, kLayers> splits_{};  // weight-gradient splits
  std::array<TileKind, kLayers> weight_tile_{};
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
  core::DeviceArray<float> d_a4_;  // the gradient of a4, from conv5_backward
  static constexpr int kPooled = 2;  // conv1 and conv2 are pooled
  std::array<bool, kLayers> pooled_{};  // by layer: pooled in the last forward pass's epilogue
  std::array<core::DeviceArray<unsigned char>, kPooled> winners_;  // a byte per pooled value
};
