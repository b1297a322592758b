// The interface every AE step implements. The harness (main.cpp) owns everything else:
// flags, the images, the initial weights, timing, validation against the double-precision
// reference, reconstructions, saved weights and results.
//
// A step source file defines step_info() and make_step(); nothing more is needed for it to
// become a program `ae_NN_name`.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fields.hpp"
#include "core/step_info.hpp"
#include "ae/problem.hpp"

namespace ae {

// How close to the reference a step's arithmetic can be (thresholds: validation.hpp).
enum class Accuracy {
  fp32,  // float products and sums
  tf32,  // tensor-core products of 10-bit-mantissa operands, float sums
  bf16,  // bfloat16 operands (8-bit mantissa), float sums and float master weights
};
const char* accuracy_name(Accuracy a);

using StepInfo = core::StepInfo<Accuracy>;

// What a step hands back after training.
struct Trained {
  std::vector<float> params;    // after the last update, in the layout of tensors(model)
  std::vector<float> gradient;  // of the last training step: d loss / d params, mean over its minibatch
  std::vector<float> losses;    // the loss of every training step since load(), each before its update
  // A step that trains on several GPUs keeps a copy of the weights on each: what it compared of
  // those copies after every training step (empty: a one-GPU step, nothing to compare), and the
  // first step after which they differed (empty: the same on every rank after every step).
  std::string replicas_compared, replicas_differ;
};

class Step {
 public:
  virtual ~Step() = default;
  // Takes `initial` as the parameters, zeroes the velocity and the step count, and gets the
  // images of `problem` to where the step trains (allocating on the first call). Training
  // step t after this trains on minibatch minibatch_start(t, batch, images) of `batch` images,
  // with problem.lr and problem.momentum.
  virtual void load(const Problem& problem, const std::vector<float>& initial, int batch) = 0;
  // The next `steps` training steps: forward, loss, backward, SGD update. The harness times
  // exactly this call.
  virtual void train(long long steps) = 0;
  // Called on every rank between load() and the timed train() (never where load() serves
  // reconstruct() alone): a multi-GPU step waits there until all its ranks are loaded, so that
  // no rank's clock runs while it waits for a rank still loading.
  virtual void wait_for_ranks() {}
  // Copy back what the training so far produced.
  virtual void store(Trained& out) = 0;
  // The model's output for the first `count` images of the set, with the current parameters
  // (count x C x H x W floats).
  virtual void reconstruct(int count, float* out) = 0;
  // Parameters the step chose itself; they go into the record's "params" beside the flags.
  virtual void describe(core::Fields& params) const { (void)params; }
  // The accuracy class of the arithmetic this step was made with, where its flags choose it
  // (10's --precision); step_info()'s class otherwise. Validation applies its thresholds.
  virtual std::optional<Accuracy> accuracy() const { return std::nullopt; }
};

StepInfo step_info();
std::unique_ptr<Step> make_step(const core::Tunables& tunables);

}  // namespace ae
