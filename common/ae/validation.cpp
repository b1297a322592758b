#include "ae/validation.hpp"

#include <cmath>
#include <cstdio>

#include "core/metrics.hpp"
#include "core/ranks.hpp"
#include "ae/reference.hpp"

namespace ae {

const char* accuracy_name(Accuracy a) {
  switch (a) {
    case Accuracy::fp32: return "fp32";
    case Accuracy::tf32: return "tf32";
    case Accuracy::bf16: return "bf16";
  }
  return "?";
}

Thresholds thresholds(Accuracy a) {
  // Reasons and the measured errors behind them: steps/ae/README.md, "Accuracy classes".
  switch (a) {
    case Accuracy::fp32: return {1e-4, 1e-4, 1e-2};
    case Accuracy::tf32: return {5e-3, 5e-2, 5e-2};
    case Accuracy::bf16: return {2e-2, 1e-1, 1e-1};
  }
  return {};
}

namespace {

std::string sci(double v) {
  char s[32];
  snprintf(s, sizeof s, "%.3g", v);
  return s;
}

double relative_l2(const double* ref, const double* test, size_t n) {
  const std::vector<double> r(ref, ref + n), t(test, test + n);
  return core::compare(r, t).rel_l2;
}

// Sum over tensors of |a - b|^2 / |reference|^2: what the per-tensor checks bound, squared.
struct TensorNorms {
  std::vector<double> inverse;  // 1 / |reference tensor|^2 per parameter (1 where the tensor is zero)
  TensorNorms(const std::vector<Tensor>& tensors, const std::vector<double>& ref) : inverse(ref.size(), 1.0) {
    for (const Tensor& t : tensors) {
      double norm = 0;
      for (size_t j = t.offset; j < t.offset + t.count; ++j) norm += ref[j] * ref[j];
      if (norm > 0) std::fill(inverse.begin() + long(t.offset), inverse.begin() + long(t.offset + t.count), 1.0 / norm);
    }
  }
  double distance(const std::vector<double>& a, const std::vector<double>& b) const {
    double e = 0;
    for (size_t j = 0; j < a.size(); ++j) e += (a[j] - b[j]) * (a[j] - b[j]) * inverse[j];
    return e;
  }
};

}  // namespace

KinksFollowed follow_kinks(const std::vector<Tensor>& tensors, const std::vector<reference::Kink>& kinks,
                          std::vector<double>& ref, const std::vector<double>& step) {
  const TensorNorms norms(tensors, ref);
  KinksFollowed f;
  double error = norms.distance(ref, step);
  std::vector<std::pair<double, double>> taken;  // (size, margin) of each alternative taken
  for (const reference::Kink& k : kinks) {
    double size = 0;
    for (size_t j = 0; j < k.index.size(); ++j) {
      ref[k.index[j]] += k.value[j];
      size += k.value[j] * k.value[j] * norms.inverse[k.index[j]];
    }
    const double e = norms.distance(ref, step);
    if (e < error) {
      taken.push_back({size, k.margin});
      error = e;
    } else {
      for (size_t j = 0; j < k.index.size(); ++j) ref[k.index[j]] -= k.value[j];
    }
  }
  // One mattered when it moved the gradient by more than the error left at the end. (Not the
  // error left before it: a decision the step took the other way accounts for about all of that,
  // so the two are equal to rounding.)
  f.taken = taken.size();
  for (const auto& [size, margin] : taken)
    if (size > error) {
      ++f.mattered;
      f.widest = std::max(f.widest, margin);
    }
  return f;
}

Verdict validate(Step& step, const Problem& p, const std::vector<float>& initial, const Trained& timed,
                 Accuracy accuracy) {
  const std::vector<float>& timed_losses = timed.losses;
  Verdict v;
  v.replicas_compared = timed.replicas_compared;
  if (!timed.replicas_differ.empty()) v.replicas_differ = "timed run: " + timed.replicas_differ;
  v.accuracy = accuracy;
  v.limits = thresholds(accuracy);
  v.images = std::max(1, std::min(kCheckImages, p.images() / 2));
  // A multi-GPU step trains each rank on a share of every minibatch: more ranks than that get an
  // image each (one-GPU steps are one rank).
  v.images = std::max(v.images, std::min(core::ranks().size, p.images()));
  const auto tensor_list = tensors(p.model);

  step.load(p, initial, v.images);
  std::vector<double> params(initial.begin(), initial.end());  // the step's weights before each step
  std::vector<double> velocity(initial.size(), 0.0);
  Trained t;
  for (int s = 0; s < kCheckSteps; ++s) {
    const float* images = p.data->image(minibatch_start(s, v.images, p.images()));
    // The reference works at the weights the step had, so that each step is checked on its own.
    reference::LossAndGradient ref = reference::loss_and_gradient(
        p.model, params, images, v.images, accuracy == Accuracy::fp32 ? kKinkTolerance : 0.0, kMaxKinks);
    step.train(1);
    step.store(t);
    if (v.replicas_compared.empty()) v.replicas_compared = t.replicas_compared;
    if (v.replicas_differ.empty() && !t.replicas_differ.empty())
      v.replicas_differ = "check step " + std::to_string(s + 1) + ": " + t.replicas_differ;
    const std::vector<double> gradient(t.gradient.begin(), t.gradient.end());
    StepCheck c;
    c.kinks_found = ref.kinks_found;
    c.kinks_examined = ref.kinks.size();
    c.exact_ties = ref.exact_ties;
    c.widest_examined = ref.kinks.empty() ? 0.0 : ref.kinks.back().margin;
    const KinksFollowed followed = follow_kinks(tensor_list, ref.kinks, ref.gradient, gradient);
    c.kinks_flipped = followed.mattered;
    c.widest_flipped = followed.widest;
    std::vector<double> expected_change(params.size());
    for (size_t j = 0; j < params.size(); ++j) {
      velocity[j] = p.momentum * velocity[j] + ref.gradient[j];
      expected_change[j] = -p.lr * velocity[j];
    }
    c.reference_loss = ref.loss;
    c.loss = t.losses.size() > size_t(s) ? t.losses[s] : NAN;
    c.loss_error = std::fabs(c.loss - ref.loss) / std::fabs(ref.loss);
    if (!std::isfinite(c.loss_error)) c.loss_error = INFINITY;
    std::vector<double> change(params.size());
    for (size_t j = 0; j < params.size(); ++j) change[j] = double(t.params[j]) - params[j];
    for (size_t k = 0; k < tensor_list.size(); ++k) {
      const Tensor& tensor = tensor_list[k];
      TensorCheck tc;
      tc.name = tensor.name;
      tc.gradient = relative_l2(ref.gradient.data() + tensor.offset, gradient.data() + tensor.offset, tensor.count);
      tc.update = relative_l2(expected_change.data() + tensor.offset, change.data() + tensor.offset, tensor.count);
      if (std::isnan(tc.gradient)) tc.gradient = INFINITY;
      if (std::isnan(tc.update)) tc.update = INFINITY;
      c.tensors.push_back(tc);
      if (tc.gradient > c.tensors[c.worst_gradient].gradient) c.worst_gradient = k;
      if (tc.update > c.tensors[c.worst_update].update) c.worst_update = k;
    }
    v.worst_loss = std::max(v.worst_loss, c.loss_error);
    v.worst_gradient = std::max(v.worst_gradient, c.tensors[c.worst_gradient].gradient);
    v.worst_update = std::max(v.worst_update, c.tensors[c.worst_update].update);
    v.steps.push_back(c);
    params.assign(t.params.begin(), t.params.end());
  }

  v.goal = p.training_goal();
  if (v.goal.applies) {
    double sum = 0;
    for (int s = v.goal.step - v.goal.window; s < v.goal.step; ++s) sum += timed_losses.at(size_t(s));
    v.goal_loss = sum / v.goal.window;
  }

  // The first failure, in the order a reader would look for it: ranks that trained different
  // weights first (each rank's own gradient and loss may look right while they disagree).
  if (!v.replicas_differ.empty()) v.failure = "ranks: the weights are not the same on every rank: " + v.replicas_differ;
  for (size_t s = 0; s < v.steps.size() && v.failure.empty(); ++s) {
    const StepCheck& c = v.steps[s];
    const std::string at = "check step " + std::to_string(s + 1) + " (" + std::to_string(v.images) + " images): ";
    if (!(c.loss_error <= v.limits.loss))
      v.failure = at + "loss " + sci(c.loss) + " vs reference " + sci(c.reference_loss) + " (relative error " +
                  sci(c.loss_error) + " > " + sci(v.limits.loss) + ")";
    else if (!(c.tensors[c.worst_gradient].gradient <= v.limits.gradient))
      v.failure = at + "gradient of " + c.tensors[c.worst_gradient].name + " has relative error " +
                  sci(c.tensors[c.worst_gradient].gradient) + " > " + sci(v.limits.gradient);
    else if (!(c.tensors[c.worst_update].update <= v.limits.update))
      v.failure = at + "update of " + c.tensors[c.worst_update].name + " has relative error " +
                  sci(c.tensors[c.worst_update].update) + " > " + sci(v.limits.update) + " (lr " + sci(p.lr) +
                  ", momentum " + sci(p.momentum) + ")";
  }
  // A run whose training diverged measured nothing worth recording, whatever the cause (a
  // learning rate too large for the data, or a step that breaks only after many steps).
  for (size_t s = 0; s < timed_losses.size() && v.failure.empty(); ++s)
    if (!std::isfinite(timed_losses[s]))
      v.failure = "training: the loss of step " + std::to_string(s + 1) + " is " + sci(timed_losses[s]) +
                  " (diverged; a smaller --lr?)";
  if (v.failure.empty() && v.goal.applies && !(v.goal_loss < v.goal.below))
    v.failure = "training: mean loss of steps " + std::to_string(v.goal.step - v.goal.window + 1) + ".." +
                std::to_string(v.goal.step) + " is " + sci(v.goal_loss) + ", not below the goal " + sci(v.goal.below);
  v.pass = v.failure.empty();
  return v;
}

}  // namespace ae
