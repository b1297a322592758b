// What every GPU step keeps on the device from one training step to the next and hands back in
// store() (step.hpp): the parameters, SGD's velocity, the last step's gradient (d loss /
// d params, the minibatch mean) and the loss of every training step since load(). The steps
// differ in how they compute the gradient, not in this.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/device_array.cuh"
#include "ae/step.hpp"

namespace ae {

class TrainingState {
 public:
  core::DeviceArray<float> params, velocity, gradient;

  // `initial` as the parameters, the velocity zero, and room for the losses of `planned` steps
  // (allocated here, not in the timed train()).
  void load(const std::vector<float>& initial, long long planned) {
    params.upload(initial.data(), initial.size());
    velocity.resize(initial.size());
    CUDA_CHECK(cudaMemset(velocity.data(), 0, initial.size() * sizeof(float)));
    gradient.resize(initial.size());
    losses_.resize(size_t(std::max(planned, 2LL)));
  }

  // Room for the losses of `steps` training steps since load(), keeping those already there:
  // the array grows only when more steps are trained than the problem's. True if it moved (a
  // captured graph that writes into it must then be captured again).
  bool reserve(long long steps) {
    if (size_t(steps) <= losses_.size()) return false;
    std::vector<float> kept(losses_.size());
    losses_.download(kept.data());  // after the work queued before it (cudaMemcpy)
    losses_.resize(size_t(steps));
    if (!kept.empty())
      CUDA_CHECK(cudaMemcpy(losses_.data(), kept.data(), kept.size() * sizeof(float), cudaMemcpyHostToDevice));
    return true;
  }

  // Where training step t (since load()) writes its loss.
  float* losses() { return losses_.data(); }

  // The parameters, the last gradient and the losses of the first `steps` steps.
  void store(Trained& out, long long steps) const {
    out.params.resize(params.size());
    out.gradient.resize(gradient.size());
    out.losses.resize(size_t(steps));
    params.download(out.params.data());
    gradient.download(out.gradient.data());
    if (steps)
      CUDA_CHECK(cudaMemcpy(out.losses.data(), losses_.data(), size_t(steps) * sizeof(float), cudaMemcpyDeviceToHost));
  }

 private:
  core::DeviceArray<float> losses_;
};

}  // namespace ae
