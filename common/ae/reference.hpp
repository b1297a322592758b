// The CPU reference: the autoencoder's loss, its gradient and SGD training in double
// precision, by direct loops, written independently of every step (the input gradient is
// scattered here, gathered in the steps). Its gradient is checked against central finite
// differences in tests/ae.
//
// A minibatch gradient is the gradient of the minibatch's loss: every image's contribution
// to a weight gradient is added (never written over), and each image's backward pass reads
// the activations of that image's own forward pass.
#pragma once
#include <vector>

#include "ae/model.hpp"

namespace ae::reference {

// The mean squared error over all pixels of the minibatch, (1 / (n C H W)) sum (y - x)^2,
// of `n` images (NCHW floats) under `params`.
double loss(const Model& m, const std::vector<double>& params, const float* images, int n);

// A decision of the forward pass that float arithmetic may take the other way: a ReLU whose
// input is within the tolerance of 0 (not exactly 0), or a 2x2 max-pooling window with an
// input within the tolerance of its maximum (not equal to it), one kink for each such input. Its `alternative` is the change of the minibatch
// gradient if it went the other way (the ReLU off instead of on, or the reverse, and under a
// pooling window the window decided again: a unit turned on in a window whose other inputs are
// off takes the window's gradient; the pool passing the gradient of an input near the maximum instead of the
// maximum's).
struct Kink {
  int layer = 0;      // 1..4: after conv1..conv4
  bool pool = false;  // max pooling (else ReLU)
  int image = 0;
  size_t unit = 0;    // the ReLU's index, or the pooled output's, in that layer of that image
  // |input| of the ReLU, or the gap of the window's maximum to `to`, relative to the sum of
  // |weight x input| that made them (the scale of any implementation's rounding error there)
  double margin = 0;
  // A pooling window's input that would take its gradient instead of the maximum: any input
  // within the tolerance of it (not only the runner-up: with two maxima exactly equal, a third
  // input just below them may be what float rounds above both).
  size_t to = 0;
  // The alternative, sparse: gradient[index[j]] changes by value[j].
  std::vector<size_t> index;
  std::vector<double> value;
};

struct LossAndGradient {
  double loss = 0;
  std::vector<double> gradient;  // d loss / d params, in the layout of tensors(m)
  std::vector<Kink> kinks;       // the (up to max_kinks) smallest margins below kink_tolerance, smallest first
  size_t kinks_found = 0;        // all margins below kink_tolerance
  size_t exact_ties = 0;         // ReLU inputs exactly 0 and pooling windows with two equal maxima
};
// How a reduced-precision step rounds what it computes, for studying its error against the
// exact reference (tests/ae/tf32_error.cpp): `operand` is applied to both operands of every
// product of a convolution (the forward pass's input and weight, the input gradient's d_out and
// weight, the weight gradient's d_out and input; not to the bias or its gradient's sum),
// `store` to every activation and gradient a layer writes (a float step keeps them in
// float). Null functions, or no Rounding (the default): the exact double reference.
struct Rounding {
  double (*operand)(double) = nullptr;
  double (*store)(double) = nullptr;
};

// kink_tolerance 0: no kinks are looked for.
LossAndGradient loss_and_gradient(const Model& m, const std::vector<double>& params, const float* images, int n,
                                  double kink_tolerance = 0, size_t max_kinks = 64,
                                  const Rounding* rounding = nullptr);

// One image's forward pass as far as its decisions: the input z of every ReLU after conv1..conv4
// with its magnitude (|bias| + the sum of |weight x input| that made it: the rounding scale),
// and for each 2x2 pooling window after conv1 and conv2 the input it passed on (an index into
// that layer's z). Two passes (exact, rounded) show which decisions rounding took the other way.
struct ForwardDecisions {
  std::vector<double> z[4], magnitude[4];
  std::vector<size_t> from[2];
};
ForwardDecisions forward_decisions(const Model& m, const std::vector<double>& params, const float* image,
                                   const Rounding* rounding = nullptr);

// One step of SGD with momentum as PyTorch defines it (dampening 0, no Nesterov):
// velocity = momentum * velocity + gradient; params -= lr * velocity. A zero velocity
// makes the first step plain SGD.
void sgd_update(std::vector<double>& params, std::vector<double>& velocity, const std::vector<double>& gradient,
                double lr, double momentum);

// The model's output for one image.
std::vector<double> reconstruct(const Model& m, const std::vector<double>& params, const float* image);

}  // namespace ae::reference
