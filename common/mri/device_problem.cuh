// What every MRI GPU step shares and none of them teaches: the problem's arrays in device
// memory (uploaded by load(), allocated on the first call) and the output copied back by
// store(). A step's own source keeps only its kernels and its compute().
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/device_array.cuh"
#include "core/timing.hpp"
#include "mri/step.hpp"

namespace mri {

using core::DeviceArray;

// The inputs as the lecture's kernels read them (structures of arrays), the output
// rFhD/iFhD, and the sizes. For Q there are no data d: dR/dI stay empty.
struct DeviceProblem {
  Kernel kernel = Kernel::fhd;
  int numK = 0, numX = 0;
  Inputs host{};  // the host arrays, for steps that prepare their own layout
  DeviceArray<float> kx, ky, kz, phiR, phiI, dR, dI;
  DeviceArray<float> x, y, z;
  DeviceArray<float> rFhD, iFhD;
  double upload_ms = 0;  // the last upload(), host clock (a copy from pageable memory returns once staged)

  bool q() const { return kernel == Kernel::q; }

  void upload(const Inputs& in) {
    const core::HostClock clock;
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
    upload_ms = clock.elapsed_ms();
  }
  void download(float* outR, float* outI) const {
    rFhD.download(outR);
    iFhD.download(outI);
  }
};

// Blocks of `threads` that cover `count` items (the last block is partial: kernels guard).
inline int blocks_for(int count, int threads) { return (count + threads - 1) / threads; }

}  // namespace mri
