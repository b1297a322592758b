using RecurrenceKernel = void (*)(const KSample*, const float*, const float*, const float*, float*,
                                  float*, int, int, int, int);

RecurrenceKernel recurrence_for(int voxels) {
  switch (voxels) {
    case 1: return cmpFhDRecurrence<1>;
    case 2: return cmpFhDRecurrence<2>;
    case 4: return cmpFhDRecurrence<4>;
    case 8: return cmpFhDRecurrence<8>;
    case 16: return cmpFhDRecurrence<16>;
  }
  throw core::UsageError("--voxels " + std::to_string(voxels) + ": must be 1, 2, 4, 8 or 16");
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int voxels)
      : threads_(threads), voxels_(voxels), recurrence_(recurrence_for(voxels)) {}
  void load(const Inputs& in) override {
    // The grid is found from the coordinates by the problem code (find_grid, problem.hpp).
    if (in.nx == 0)
      throw core::UsageError("the phase recurrence needs a Cartesian grid of voxels (x = (ix - nx/2)/nx, "
                             "y, z alike, in the order (iz * ny + iy) * nx + ix); these voxels are not one");
    const bool first_load = k_.size() == 0;
    dev_.upload(in);
    k_.resize(in.numK);
    if (!first_load) return;
    nx_ = in.nx;
    // Enough sample slices that one wave of blocks fills every SM.
    const int rows = in.numX / nx_, segments = (nx_ + voxels_ - 1) / voxels_;
    const int blocks_per_slice = blocks_for(segments * rows, threads_);
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, recurrence_, threads_,
                                                             threads_ * sizeof(KSample)));
    const int wanted = std::max(1, (per_sm * sms + blocks_per_slice - 1) / blocks_per_slice);
    // Whole tiles per slice, so that only the last slice has a partial tile.
    const int tiles = blocks_for(in.numK, threads_);
    samples_per_slice_ = blocks_for(tiles, std::min(wanted, tiles)) * threads_;
    slices_ = blocks_for(in.numK, samples_per_slice_);
    rPart_.resize(size_t(slices_) * in.numX);
    iPart_.resize(size_t(slices_) * in.numX);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, nx_, d.q());
    CUDA_CHECK_LAUNCH();
    const int rows = d.numX / nx_, segments = (nx_ + voxels_ - 1) / voxels_;
    const dim3 grid(blocks_for(segments * rows, threads_), slices_);
    recurrence_<<<grid, threads_, threads_ * sizeof(KSample)>>>(
        k_.data(), d.x.data(), d.y.data(), d.z.data(), rPart_.data(), iPart_.data(), d.numK,
        samples_per_slice_, nx_, rows);
    CUDA_CHECK_LAUNCH();
    sumSlices<<<blocks_for(d.numX, 256), 256>>>(rPart_.data(), iPart_.data(), d.rFhD.data(),
                                                 d.iFhD.data(), slices_, d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, voxels_;
  RecurrenceKernel recurrence_;
  int nx_ = 0;  // the grid's row length
  int slices_ = 1, samples_per_slice_ = 0;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
  DeviceArray<float> rPart_, iPart_;  // per-slice partial sums
};
