// What every MRI GPU step shares and none of them teaches: the problem's arrays in device
// memory (uploaded by load(), allocated on the first call) and the output copied back by
// store(). A step's own source keeps only its kernels and its compute().
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.cuh"
#include "step.hpp"

namespace mri {

// One cudaMalloc'ed array, freed with its owner.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data_); }

  void resize(size_t n) {
    if (n == size_) return;
    CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
    if (n) CUDA_CHECK(cudaMalloc(&data_, n * sizeof(T)));
    size_ = n;
  }
  void upload(const T* host, size_t n) {
    resize(n);
    if (n) CUDA_CHECK(cudaMemcpy(data_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* host) const {
    if (size_) CUDA_CHECK(cudaMemcpy(host, data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// The inputs as the lecture's kernels read them (structures of arrays), the output
// rFhD/iFhD, and the sizes. For Q there are no data d: dR/dI stay empty.
struct DeviceProblem {
  Kernel kernel = Kernel::fhd;
  int numK = 0, numX = 0;
  Inputs host{};  // the host arrays, for steps that prepare their own layout
  DeviceArray<float> kx, ky, kz, phiR, phiI, dR, dI;
  DeviceArray<float> x, y, z;
  DeviceArray<float> rFhD, iFhD;

  bool q() const { return kernel == Kernel::q; }

  void upload(const Inputs& in) {
    kernel = in.kernel;
    numK = in.numK;
    numX = in.numX;
    host = in;
    kx.upload(in.kx, numK); ky.upload(in.ky, numK); kz.upload(in.kz, numK);
    phiR.upload(in.phiR, numK); phiI.upload(in.phiI, numK);
    if (in.kernel == Kernel::fhd) {
      dR.upload(in.dR, numK); dI.upload(in.dI, numK);
    }
    x.upload(in.x, numX); y.upload(in.y, numX); z.upload(in.z, numX);
    rFhD.resize(numX); iFhD.resize(numX);
  }
  void download(float* outR, float* outI) const {
    rFhD.download(outR);
    iFhD.download(outI);
  }
};

// Blocks of `threads` that cover `count` items (the last block is partial: kernels guard).
inline int blocks_for(int count, int threads) { return (count + threads - 1) / threads; }

}  // namespace mri
