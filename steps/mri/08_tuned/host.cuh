// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

using FhDKernel = void (*)(const float*, const float*, const float*, float*, float*, int, int);

template <int kVoxels>
FhDKernel kernel_for(int unroll) {
  switch (unroll) {
    case 1: return cmpFhD<1, kVoxels>;
    case 2: return cmpFhD<2, kVoxels>;
    case 4: return cmpFhD<4, kVoxels>;
    case 8: return cmpFhD<8, kVoxels>;
    case 16: return cmpFhD<16, kVoxels>;
  }
  throw core::UsageError("--unroll " + std::to_string(unroll) + ": must be 1, 2, 4, 8 or 16");
}

FhDKernel kernel_for(int unroll, int voxels) {
  switch (voxels) {
    case 1: return kernel_for<1>(unroll);
    case 2: return kernel_for<2>(unroll);
    case 4: return kernel_for<4>(unroll);
    case 8: return kernel_for<8>(unroll);
  }
  throw core::UsageError("--voxels " + std::to_string(voxels) + ": must be 1, 2, 4 or 8");
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int unroll, int chunk, int voxels)
      : threads_(threads), chunk_(chunk), voxels_(voxels), cmpFhD_(kernel_for(unroll, voxels)) {
    // More voxels per thread, more registers: 8 voxels take 80, too many for 1024 threads.
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, cmpFhD_));
    if (threads > attr.maxThreadsPerBlock)
      throw core::UsageError("--threads " + std::to_string(threads) + " with --voxels " +
                             std::to_string(voxels) + ": the kernel uses " +
                             std::to_string(attr.numRegs) + " registers per thread, at most " +
                             std::to_string(attr.maxThreadsPerBlock) + " threads per block");
  }
  void load(const Inputs& in) override {
    dev_.upload(in);
    k_.resize(in.numK);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    for (int first = 0; first < d.numK; first += chunk_) {
      const int count = std::min(chunk_, d.numK - first);
      to_constant(k_.data() + first, count);
      cmpFhD_<<<blocks_for(d.numX, threads_ * voxels_), threads_>>>(
          d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), count, d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, chunk_, voxels_;
  FhDKernel cmpFhD_;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
};
