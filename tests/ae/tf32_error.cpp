// How large an error TF32 (or, with --precision bf16, BF16) operand rounding alone makes in a
// training step's loss and gradients: the study behind the tf32 and bf16 accuracy classes
// (steps/ae/README.md, "Validation").
//
// For each seed it follows validation's two check steps (validate() in common/ae/validation.cpp:
// He weights from the seed, the seed's synthetic images, minibatches of 4: images 0-3, then
// 4-7, the second step at the weights the first step left) and computes, at the same weights,
// the exact double reference and an emulation of a TF32 step: the same double arithmetic with
// both operands of every convolution product rounded to TF32 first (round to nearest, ties away
// from zero, on the float value: cvt.rna.tf32.f32) and every activation and gradient a layer
// writes rounded to float (reference::Rounding). It prints, per check step, the relative error
// of the loss and the relative L2 error of every gradient tensor and update, how many ReLU and
// pooling decisions the emulation took the other way (and the widest margin among them, as the
// reference measures margins: relative to |bias| + sum |weight x input|), and, with
// --kink-tolerance, what is left of the gradient error once the reference follows its
// decisions within that margin as validation does for fp32 steps. For scale, it prints what two
// bugs would show, each as validation sees it (the worst tensor's relative L2 error against the
// exact gradient): a minibatch whose last image's term is missing, and weight gradients whose
// 3x3 taps are stored reversed (the input gradient's mirrored kernel used for the weights).
//
// A study, not a test: it prints measurements and asserts only its own rounding function.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "ae/data.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "ae/model.hpp"
#include "ae/problem.hpp"
#include "ae/reference.hpp"
#include "ae/validation.hpp"

namespace {

using namespace ae;

int g_mantissa_bits = 10;  // TF32 keeps 10 of float's 23, BF16 7; --bits asks for another width
bool g_ties_even = false;  // TF32's cvt.rna rounds ties away from zero, BF16's cvt.rn to even
Accuracy g_class = Accuracy::tf32;  // whose class the summary line prints

// Round to nearest keeping g_mantissa_bits of the float's mantissa: adding just under half of
// the last kept bit's unit to the magnitude bits, plus one where a tie goes up, carries into
// the kept bits exactly when the value rounds up (cvt.rna.tf32.f32 for 10 bits, ties away;
// cvt.rn.bf16x2.f32 for 7, ties to even, which goes up only from an odd last kept bit).
double round_operand(double v) {
  const float f = float(v);
  if (g_mantissa_bits >= 23 || !std::isfinite(f)) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const int drop = 23 - g_mantissa_bits;
  const uint32_t tie_up = g_ties_even ? (bits >> drop) & 1u : 1u;
  bits = (bits + (1u << (drop - 1)) - 1u + tie_up) & ~((1u << drop) - 1u);
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

double round_store(double v) { return double(float(v)); }

// The rounding function against values worked by hand (10 bits: the unit of the last kept bit
// at 1 is 2^-10).
bool rounding_is_right() {
  const int saved = g_mantissa_bits;
  g_mantissa_bits = 10;
  const double u = std::ldexp(1.0, -10), f = std::ldexp(1.0, -23);
  const bool ok = round_operand(1 + u / 2) == 1 + u &&              // a tie: away from zero
                  round_operand(-(1 + u / 2)) == -(1 + u) &&        // ... for negatives too
                  round_operand(1 + u / 2 - f) == 1 &&              // just below the tie: down
                  round_operand(1 + u + u / 2 - f) == 1 + u &&      // from an odd last bit: down
                  round_operand(2 - u / 2) == 2 &&                  // carry into the exponent
                  round_operand(0.1) == 0.0999755859375 &&          // 0x3dcccccd -> 0x3dccc000
                  round_operand(0) == 0;
  // Ties to even at 7 bits (unit 2^-7 at 1): a tie from an even last bit stays, from an odd one goes up.
  g_mantissa_bits = 7;
  g_ties_even = true;
  const double b = std::ldexp(1.0, -7);
  const bool even_ok = round_operand(1 + b / 2) == 1 &&                // a tie at an even last bit: stays
                       round_operand(1 + b + b / 2) == 1 + 2 * b &&    // a tie at an odd one: up to even
                       round_operand(-(1 + b + b / 2)) == -(1 + 2 * b) &&
                       round_operand(1 + b / 2 + f) == 1 + b &&        // just above the tie: up
                       round_operand(0.1) == 0.10009765625;            // 0x3dcccccd -> 0x3dcd0000
  g_ties_even = false;
  g_mantissa_bits = saved;
  return ok && even_ok;
}

double relative_l2(const std::vector<double>& ref, const std::vector<double>& test, const Tensor& t) {
  const std::vector<double> r(ref.begin() + long(t.offset), ref.begin() + long(t.offset + t.count));
  const std::vector<double> e(test.begin() + long(t.offset), test.begin() + long(t.offset + t.count));
  return core::compare(r, e).rel_l2;
}

// Decisions the rounded forward pass took the other way, over a minibatch.
struct Flips {
  size_t relu[4] = {}, pool[2] = {};
  size_t relu_passing[4] = {};  // ReLU flips whose unit's gradient is passed on (conv3, conv4: all;
                                // conv1, conv2: the unit its pooling window takes in either pass)
  size_t relu_units = 0, pool_windows = 0;
  double widest = 0;  // the largest margin (in the exact pass) of a flipped decision that passes gradient
  size_t within[4] = {};  // decisions of the exact pass with margins below 2^-11, 2^-10, 2^-9, 2^-8
};

void count_flips(const Model& m, const std::vector<double>& params, const float* images, int n,
                 const reference::Rounding& rounding, Flips& f) {
  const size_t image_size = size_t(m.channels) * m.height * m.width;
  for (int b = 0; b < n; ++b) {
    const float* image = images + size_t(b) * image_size;
    const reference::ForwardDecisions e = reference::forward_decisions(m, params, image);
    const reference::ForwardDecisions r = reference::forward_decisions(m, params, image, &rounding);
    for (int l = 0; l < 4; ++l) {
      std::vector<bool> passing(e.z[l].size(), l >= 2);
      if (l < 2)
        for (size_t o = 0; o < e.from[l].size(); ++o) passing[e.from[l][o]] = passing[r.from[l][o]] = true;
      for (size_t j = 0; j < e.z[l].size(); ++j) {
        const double margin = std::fabs(e.z[l][j]) / e.magnitude[l][j];
        for (int k = 0; k < 4; ++k)
          if (e.z[l][j] != 0 && margin < std::ldexp(1.0, -11 + k)) ++f.within[k];
        if ((e.z[l][j] > 0) == (r.z[l][j] > 0)) continue;
        ++f.relu[l];
        if (passing[j]) {
          ++f.relu_passing[l];
          f.widest = std::max(f.widest, margin);
        }
      }
      f.relu_units += e.z[l].size();
    }
    for (int l = 0; l < 2; ++l) {
      for (size_t o = 0; o < e.from[l].size(); ++o) {
        const size_t i = e.from[l][o], j = r.from[l][o];
        if (i == j) continue;
        ++f.pool[l];
        const double gap = std::max(e.z[l][i], 0.0) - std::max(e.z[l][j], 0.0);
        f.widest = std::max(f.widest, gap / (e.magnitude[l][i] + e.magnitude[l][j]));
      }
      f.pool_windows += e.from[l].size();
    }
  }
}

struct Options {
  std::string size = "tiny";
  int first_seed = 1, last_seed = 10;
  double lr = 0.001, momentum = 0.0;
  double kink_tolerance = 0;
  int max_kinks = 128;
  bool flips = true;  // count the decisions the emulation takes the other way (two more forward passes an image)
};

void study(const Options& o) {
  const Preset pre = preset(o.size);
  const Model& m = pre.model;
  const auto L = tensors(m);
  const int n = std::max(1, std::min(kCheckImages, pre.images / 2));  // as validate() chooses
  reference::Rounding rounding;
  rounding.operand = round_operand;
  rounding.store = round_store;

  printf("# %s preset, model %s, %d images per check step, lr %g, momentum %g, operands rounded to %d mantissa bits "
         "(round to nearest, ties %s)%s\n",
         o.size.c_str(), m.describe().c_str(), n, o.lr, o.momentum, g_mantissa_bits, g_ties_even ? "to even" : "away",
         o.kink_tolerance > 0 ? (", kinks followed below a margin of " + std::to_string(o.kink_tolerance) +
                                 " (the " + std::to_string(o.max_kinks) + " closest)").c_str()
                              : "");
  printf("# columns: seed step loss_err");
  for (const Tensor& t : L) printf(" g:%s", t.name.c_str());
  for (const Tensor& t : L) printf(" u:%s", t.name.c_str());
  printf(" worst_g worst_u relu_flips(l1,l2,l3,l4) passing(l1,l2,l3,l4) pool_flips(l1,l2) units windows "
         "widest_flipped_margin exact_below_2^-11,-10,-9,-8");
  printf(" bug_missing_image bug_reversed_taps");
  if (o.kink_tolerance > 0) printf(" kinks_found kinks_examined kinks_taken worst_g_after");
  printf("\n");

  double worst_loss = 0, worst_g = 0, worst_u = 0, worst_after = 0, widest = 0, weakest_bug = INFINITY;
  for (int seed = o.first_seed; seed <= o.last_seed; ++seed) {
    const ImageSet set = synthetic_images(kCheckSteps * n, m.channels, m.height, m.width, uint64_t(seed));
    const std::vector<float> initial = he_initialization(m, uint64_t(seed));
    std::vector<double> params(initial.begin(), initial.end());  // the step's weights (floats)
    std::vector<double> v_ref(params.size(), 0.0);
    std::vector<float> v_step(params.size(), 0.0f);
    for (int s = 0; s < kCheckSteps; ++s) {
      const float* images = set.image(minibatch_start(s, n, set.count));
      const reference::LossAndGradient exact = reference::loss_and_gradient(
          m, params, images, n, o.kink_tolerance, size_t(o.max_kinks));
      const reference::LossAndGradient tf32 = reference::loss_and_gradient(m, params, images, n, 0, 0, &rounding);
      // The step's gradient is float; its update float SGD (PyTorch's momentum).
      std::vector<double> g_step(params.size()), change(params.size()), expected(params.size()), next(params.size());
      const float lr = float(o.lr), momentum = float(o.momentum);
      for (size_t j = 0; j < params.size(); ++j) {
        g_step[j] = float(tf32.gradient[j]);
        v_step[j] = momentum * v_step[j] + float(g_step[j]);
        next[j] = float(params[j]) - lr * v_step[j];
        change[j] = next[j] - params[j];
        v_ref[j] = o.momentum * v_ref[j] + exact.gradient[j];
        expected[j] = -o.lr * v_ref[j];
      }
      Flips f;
      if (o.flips) count_flips(m, params, images, n, rounding, f);
      const double loss_err = std::fabs(tf32.loss - exact.loss) / std::fabs(exact.loss);
      printf("%d %d %.3g", seed, s + 1, loss_err);
      double wg = 0, wu = 0;
      for (const Tensor& t : L) {
        const double e = relative_l2(exact.gradient, g_step, t);
        wg = std::max(wg, e);
        printf(" %.3g", e);
      }
      for (const Tensor& t : L) {
        const double e = relative_l2(expected, change, t);
        wu = std::max(wu, e);
        printf(" %.3g", e);
      }
      printf(" %.3g %.3g", wg, wu);
      if (o.flips)
        printf(" %zu,%zu,%zu,%zu %zu,%zu,%zu,%zu %zu,%zu %zu %zu %.3g %zu,%zu,%zu,%zu", f.relu[0], f.relu[1], f.relu[2],
               f.relu[3], f.relu_passing[0], f.relu_passing[1], f.relu_passing[2], f.relu_passing[3], f.pool[0], f.pool[1],
               f.relu_units, f.pool_windows, f.widest, f.within[0], f.within[1], f.within[2], f.within[3]);
      else
        printf(" - - - - - - -");
      {
        // The two bugs: the first n - 1 images' gradient at the scale of n (the minibatch's
        // less the last image's term: that image's own gradient over n); the taps reversed.
        const reference::LossAndGradient last = reference::loss_and_gradient(m, params, images + size_t(n - 1) * set.image_size(), 1);
        std::vector<double> missing(params.size()), reversed = exact.gradient;
        for (size_t j = 0; j < params.size(); ++j) missing[j] = exact.gradient[j] - last.gradient[j] / double(n);
        for (const Tensor& t : L)
          if (t.shape.size() == 4)
            for (size_t j = t.offset; j < t.offset + t.count; j += 9)
              for (int k = 0; k < 9; ++k) reversed[j + size_t(k)] = exact.gradient[j + size_t(8 - k)];
        double bug_missing = 0, bug_reversed = 0;
        for (const Tensor& t : L) {
          if (n > 1) bug_missing = std::max(bug_missing, relative_l2(exact.gradient, missing, t));
          bug_reversed = std::max(bug_reversed, relative_l2(exact.gradient, reversed, t));
        }
        printf(" %.3g %.3g", bug_missing, bug_reversed);
        weakest_bug = std::min({weakest_bug, n > 1 ? bug_missing : INFINITY, bug_reversed});
      }
      if (o.kink_tolerance > 0) {
        std::vector<double> followed = exact.gradient;
        const size_t taken = follow_kinks(L, exact.kinks, followed, g_step).taken;
        double after = 0;
        for (const Tensor& t : L) after = std::max(after, relative_l2(followed, g_step, t));
        printf(" %zu %zu %zu %.3g", exact.kinks_found, exact.kinks.size(), taken, after);
        worst_after = std::max(worst_after, after);
      }
      printf("\n");
      fflush(stdout);
      worst_loss = std::max(worst_loss, loss_err);
      worst_g = std::max(worst_g, wg);
      worst_u = std::max(worst_u, wu);
      widest = std::max(widest, f.widest);
      // The next check step starts from the weights this step left (validate() does the same).
      params = next;
    }
  }
  printf("# worst over seeds %d..%d: loss %.3g, gradient %.3g, update %.3g, widest flipped margin %.3g; "
         "the weaker bug's smallest worst-tensor error %.3g", o.first_seed, o.last_seed, worst_loss, worst_g, worst_u, widest,
         weakest_bug);
  if (o.kink_tolerance > 0) printf(", gradient after following kinks %.3g", worst_after);
  // The class these measurements set (validation.cpp), for the test that checks it against them.
  const Thresholds bounds = thresholds(g_class);
  printf("; %s class: loss %.3g, gradient %.3g, update %.3g\n", accuracy_name(g_class), bounds.loss, bounds.gradient,
         bounds.update);
}

}  // namespace

int main(int argc, char** argv) {
  if (!rounding_is_right()) {
    fprintf(stderr, "tf32_error: the TF32 rounding function fails its hand-worked cases\n");
    return 1;
  }
  CLI::App app("TF32 operand rounding's error in the ae training step's loss and gradients, against the exact "
               "double reference (a study: prints a table)");
  Options o;
  app.add_option("--size", o.size, "Preset whose model the check steps use: tiny or small (the full model)")
      ->check(CLI::IsMember({"tiny", "small"}))
      ->capture_default_str();
  app.add_option("--first-seed", o.first_seed, "First seed (images and He weights)")->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--last-seed", o.last_seed, "Last seed")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--lr", o.lr, "SGD learning rate")->check(core::FiniteRange(1e-12, 100.0))->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->check(core::FiniteRange(0.0, 0.999))->capture_default_str();
  std::string precision = "tf32";
  app.add_option("--precision", precision,
                 "The arithmetic to emulate: tf32 (10 bits, ties away from zero) or bf16 (7 bits, ties to even); "
                 "its class is the one the summary compares")
      ->check(CLI::IsMember({"tf32", "bf16"}))
      ->capture_default_str();
  CLI::Option* bits = app.add_option("--bits", g_mantissa_bits, "Mantissa bits each operand keeps (TF32: 10; 23: float, no operand rounding)")
      ->check(CLI::Range(1, 23))
      ->capture_default_str();
  app.add_option("--kink-tolerance", o.kink_tolerance,
                 "Follow the exact reference's decisions with margins below this, as validation does for fp32 "
                 "(0: none)")
      ->check(core::FiniteRange(0.0, 1.0))
      ->capture_default_str();
  app.add_flag("--flips,!--no-flips", o.flips,
               "Count the decisions the emulation took the other way (default); --no-flips: the errors alone, "
               "a third faster (those columns print -, the widest flipped margin 0)");
  app.add_option("--max-kinks", o.max_kinks, "Kinks examined, the closest first")->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  if (const auto code = core::parse_command_line(app, argc, argv)) return *code;
  if (precision == "bf16") {
    g_class = Accuracy::bf16;
    g_ties_even = true;
    if (bits->count() == 0) g_mantissa_bits = 7;
  }
  if (o.last_seed < o.first_seed) {
    fprintf(stderr, "tf32_error: --last-seed %d is before --first-seed %d\n", o.last_seed, o.first_seed);
    return 2;
  }
  study(o);
  return 0;
}
