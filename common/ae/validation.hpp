// Validation of a step against the double-precision reference (steps/ae/README.md,
// "Validation"):
//   1. gradients: from the initial weights, the step trains kCheckSteps steps on minibatches
//      of (up to) kCheckImages images, or of one image a rank where a multi-GPU step has more
//      ranks; each step's loss, the gradient of every tensor and the update it made are
//      compared with the reference at the same weights;
//   2. training: every loss of the timed run is finite, and on a preset's own schedule the
//      loss falls below the preset's goal (problem.hpp, TrainingGoal);
//   3. a step that trains on several GPUs: every rank's weights were the same after every step
//      of the timed run and of the check (what the step compared: Trained::replicas_compared).
#pragma once
#include <string>
#include <vector>

#include "ae/problem.hpp"
#include "ae/reference.hpp"
#include "ae/step.hpp"

namespace ae {

constexpr int kCheckImages = 4;  // per minibatch: more than one, or a gradient that keeps only the
                                 // last image of the batch would pass
constexpr int kCheckSteps = 2;   // the second step's update shows the momentum

// Relative errors a step of each accuracy class may make (per tensor, L2 norm of the error
// over the L2 norm of the reference; the loss: absolute difference over the reference).
struct Thresholds {
  double loss = 0, gradient = 0, update = 0;
};
Thresholds thresholds(Accuracy a);

struct TensorCheck {
  std::string name;
  double gradient = 0;  // relative L2 error of the gradient
  double update = 0;    // relative L2 error of the parameter change
};

// Float and double may decide a ReLU or a max-pooling window differently when its margin is
// within rounding (steps/ae/README.md, "Kinks"): for fp32 steps the reference lists the
// decisions with margins below this (relative to |bias| + sum |weight x input|, the rounding
// scale of the pre-activation) and accepts either way for
// each. TF32 and BF16 steps flip so many that their thresholds include the effect instead.
constexpr double kKinkTolerance = 1e-5;
constexpr size_t kMaxKinks = 128;

struct StepCheck {
  double loss = 0, reference_loss = 0, loss_error = 0;
  size_t kinks_found = 0, kinks_examined = 0, kinks_flipped = 0, exact_ties = 0;
  double widest_flipped = 0;   // the largest margin of a decision the step took the other way
  double widest_examined = 0;  // the largest margin examined (all below it were)
  std::vector<TensorCheck> tensors;
  size_t worst_gradient = 0, worst_update = 0;  // indices into tensors
};

struct Verdict {
  Accuracy accuracy = Accuracy::fp32;
  Thresholds limits;
  int images = 0;  // per check step
  std::vector<StepCheck> steps;
  TrainingGoal goal;
  double goal_loss = 0;  // the timed run's mean loss over the goal's window
  double worst_gradient = 0, worst_update = 0, worst_loss = 0;
  std::string replicas_compared;  // what a multi-GPU step compared of its ranks' weights (empty: nothing)
  std::string replicas_differ;    // where they first differed (empty: nowhere)
  bool pass = false;
  std::string failure;  // the first reason it failed
};

// Takes each kink's alternative into the reference gradient `ref` when `step`'s gradient is
// closer to it (the sum over tensors of squared relative L2 errors): the step decided that
// unit the other way. taken: the alternatives taken; mattered: those that moved the gradient
// by more than the error left once all are followed, and the widest margin among them.
struct KinksFollowed {
  size_t taken = 0, mattered = 0;
  double widest = 0;
};
KinksFollowed follow_kinks(const std::vector<Tensor>& tensors, const std::vector<reference::Kink>& kinks,
                           std::vector<double>& ref, const std::vector<double>& step);

// Runs the step (it is loaded again: its state afterwards is the check's, not the timed run's).
// `timed`: what the timed run stored (its losses, and its ranks' agreement).
Verdict validate(Step& step, const Problem& p, const std::vector<float>& initial, const Trained& timed,
                 Accuracy accuracy);

}  // namespace ae
