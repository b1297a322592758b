// The one owner of device memory in the project: a cudaMalloc'ed array freed with its owner.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "core/cuda_check.cuh"
#include "core/device_memory.hpp"

namespace core {

// An allocation the GPU cannot hold is a size the user chose (a problem, a batch, an image
// size too large for this GPU): bad input, exit 2, with the numbers that say by how much.
inline void device_allocate(void** data, size_t bytes) {
  const cudaError_t err = cudaMalloc(data, bytes);
  if (err == cudaErrorMemoryAllocation) {
    *data = nullptr;
    cudaGetLastError();  // clear it: the next call must not report it again
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    throw UsageError("an array of " + std::to_string(bytes >> 20) + " MiB does not fit in the GPU's memory (" +
                     std::to_string(free >> 20) + " MiB free of " + std::to_string(total >> 20) +
                     " MiB): the problem, the batch or the image is too large for this GPU");
  }
  CUDA_CHECK(err);
  device_bytes().allocated(bytes);
}

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    cudaFree(data_);
    device_bytes().freed(size_ * sizeof(T));
  }

  // Reallocates only when the size changes; the contents are then undefined.
  void resize(size_t n) {
    if (n == size_) return;
    CUDA_CHECK(cudaFree(data_));
    device_bytes().freed(size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
    if (n) device_allocate(reinterpret_cast<void**>(&data_), n * sizeof(T));
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

// Page-locked host memory, the host side of asynchronous copies: cudaMemcpyAsync reads it at
// the link's full rate and overlaps it with kernels (pageable memory is staged and serialized).
template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() { cudaFreeHost(data_); }
  void resize(size_t n) {
    if (n == size_) return;
    CUDA_CHECK(cudaFreeHost(data_));
    data_ = nullptr;
    size_ = 0;
    if (n) CUDA_CHECK(cudaMallocHost(&data_, n * sizeof(T)));
    size_ = n;
  }
  T* data() { return data_; }
  size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace core
