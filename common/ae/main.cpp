// The AE harness: main() of every AE step program, on the shared loop (core/harness.hpp).
// What is AE's own: the images (synthetic, CIFAR-10, Fashion-MNIST), the model preset, the
// schedule flags, the initial weights (He, or --load), validation of the gradients against
// the double-precision reference and of the training against a measured goal, the
// reconstructions as output, the loss curve in the record, and --save of the trained weights.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "core/harness.hpp"
#include "core/npy.hpp"
#include "core/nvtx.hpp"
#include "core/ranks.hpp"
#include "ae/problem.hpp"
#include "ae/step.hpp"
#include "ae/validation.hpp"

namespace ae {
namespace {

constexpr int kMaxSyntheticImages = 200000;  // 2.4 GB of 32x32 float images
constexpr int kReconstructions = 32;         // images in --out
constexpr size_t kMaxCurvePoints = 1000;     // losses in the record; longer runs are subsampled
constexpr int kMaxRecordedImages = 16;       // --record-images: a row of the report's grid, and a
                                             // record line that stays a few hundred kB

struct Options {
  int images = 0, batch = 0, epochs = 0;  // 0: the preset's
  double lr = 0.001, momentum = 0.0;
  std::string cifar_dir, idx_dir, split = "train";
  std::string save, load;
  int record_images = 0;  // images and reconstructions put into the results record
};

void add_problem_options(CLI::App& app, Options& o) {
  app.add_option("--images", o.images, "Images to train on (default: the preset's: tiny 128, small 384, large 50000 or all of a data set)")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--batch", o.batch, "Images per minibatch (default: the preset's: tiny 8, small 16, large 64)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--epochs", o.epochs, "Passes over the images (default: the preset's: tiny 4, small 1, large 1)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--lr", o.lr, "SGD learning rate")->check(core::FiniteRange(1e-12, 100.0))->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum (PyTorch's: v = momentum v + g; w -= lr v)")
      ->check(core::FiniteRange(0.0, 0.999))
      ->capture_default_str();
  CLI::Option* cifar = app.add_option("--cifar-dir", o.cifar_dir, "CIFAR-10 binary folder (data_batch_1..5.bin, test_batch.bin) instead of synthetic images");
  app.add_option("--idx-dir", o.idx_dir, "Fashion-MNIST folder (train-images-idx3-ubyte[.gz], t10k-...; Debian: /usr/share/datasets/fashion-mnist)")
      ->excludes(cifar);
  app.add_option("--split", o.split, "Which images of --cifar-dir or --idx-dir: train or test")
      ->check(CLI::IsMember({"train", "test"}))
      ->capture_default_str();
  app.add_option("--save", o.save, "Write the trained weights to this folder, one .npy per tensor (conv1.weight.npy, ...)");
  app.add_option("--load", o.load, "Start from the weights in this folder (as --save writes them) instead of He initialization");
  app.add_option("--record-images", o.record_images,
                 "Put the first N images and the trained model's reconstructions of them into the results record "
                 "(--json), 8-bit, for the report's reconstruction grid (0 .. 16)")
      ->check(CLI::Range(0, kMaxRecordedImages))
      ->capture_default_str();
}

std::shared_ptr<const ImageSet> read_images(const Options& o, const core::CoreOptions& core, const Preset& pre,
                                            bool gpu, const std::string& program) {
  const bool real = !o.cifar_dir.empty() || !o.idx_dir.empty();
  if (core.size == "large" && !gpu && !o.images)
    throw core::UsageError("--size large is the GPU scale (" + std::string(real ? "the whole data set" : "50,000 images") +
                           " per epoch); " + program + " would take hours on a CPU. Use --size small, or --images N to insist.");
  // A preset's image count applies to real images too; large takes the whole split.
  const size_t limit = o.images ? size_t(o.images) : (core.size == "large" ? 0 : size_t(pre.images));
  if (!real) {
    if (o.images > kMaxSyntheticImages)
      throw core::UsageError("--images " + std::to_string(o.images) + ": at most " + std::to_string(kMaxSyntheticImages) +
                             " synthetic images");
    // Synthetic images have no "whole set": large's limit of 0 means its preset's 50,000.
    const int count = limit ? int(limit) : pre.images;
    return std::make_shared<ImageSet>(synthetic_images(count, pre.model.channels, pre.model.height, pre.model.width, core.seed));
  }
  ImageSet set = !o.cifar_dir.empty() ? read_cifar10(cifar10_files(o.cifar_dir, o.split), limit)
                                      : read_idx_images(fashion_mnist_file(o.idx_dir, o.split), limit);
  if (o.images && set.count < o.images)
    throw core::UsageError("--images " + std::to_string(o.images) + ": the " + set.source + " " + o.split + " images (" +
                           set.origin + ") are only " + std::to_string(set.count));
  return std::make_shared<ImageSet>(std::move(set));
}

Problem make_problem(const Options& o, const core::CoreOptions& core, bool gpu, const std::string& program) {
  if (!core.input.empty())
    throw core::UsageError("--input " + core.input + ": the AE track reads images with --cifar-dir or --idx-dir, not --input");
  const Preset pre = preset(core.size);
  Problem p;
  p.size = core.size;
  p.seed = core.seed;
  p.data = read_images(o, core, pre, gpu, program);
  p.model = pre.model;
  p.model.channels = p.data->channels;
  p.model.height = p.data->height;
  p.model.width = p.data->width;
  p.name = p.data->source != "synthetic" ? p.data->source : (o.images ? "custom" : core.size);
  p.batch = o.batch ? o.batch : pre.batch;
  p.epochs = o.epochs ? o.epochs : pre.epochs;
  p.lr = o.lr;
  p.momentum = o.momentum;
  if (p.batch > p.images())
    throw core::UsageError("--batch " + std::to_string(p.batch) + (o.batch ? "" : " (the preset's)") +
                           " is larger than the data set (" + std::to_string(p.images()) + " images)");
  return p;
}

// The folder --save will write: refused before any training if it cannot be.
void check_save_folder(const std::string& dir) {
  if (dir.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path(dir);
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) throw core::UsageError("--save " + dir + ": exists and is not a folder");
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) throw core::UsageError("--save " + dir + ": folder " + parent.string() + " does not exist");
}

core::json curve_json(const std::vector<float>& losses) {
  const size_t every = (losses.size() + kMaxCurvePoints - 1) / kMaxCurvePoints;
  core::json l = core::json::array();
  for (size_t i = 0; i < losses.size(); i += std::max<size_t>(every, 1))
    l.push_back(std::isfinite(losses[i]) ? core::json(losses[i]) : core::json(nullptr));
  return {{"losses", l}, {"every", std::max<size_t>(every, 1)}, {"steps", losses.size()}};
}

// `count` images of `set`'s shape, [image][channel][row][column] (row 0 at the top), as 8-bit
// integers: each value clipped to the images' range [0, 1] (a reconstruction may overshoot it)
// and rounded to the nearest of 256 levels, value = q / 255. A picture, not a measurement.
core::json quantized_images(const float* pixels, int count, const ImageSet& set) {
  core::json images = core::json::array();
  for (int n = 0; n < count; ++n) {
    core::json channels = core::json::array();
    for (int c = 0; c < set.channels; ++c) {
      core::json rows = core::json::array();
      for (int y = 0; y < set.height; ++y) {
        core::json row = core::json::array();
        for (int x = 0; x < set.width; ++x) {
          const float v = pixels[((size_t(n) * set.channels + c) * set.height + y) * set.width + x];
          const float clipped = std::isfinite(v) ? std::min(1.0f, std::max(0.0f, v)) : 0.0f;
          row.push_back(int(std::lround(clipped * 255.0f)));
        }
        rows.push_back(row);
      }
      channels.push_back(rows);
    }
    images.push_back(channels);
  }
  return images;
}

std::string sci(double v) {
  char s[32];
  snprintf(s, sizeof s, "%.3g", v);
  return s;
}

class AeTrack final : public core::Track {
 public:
  explicit AeTrack(Accuracy accuracy) : accuracy_(accuracy) {}

  void add_options(CLI::App& app) override { add_problem_options(app, o_); }

  void prepare(const core::CoreOptions& core, const core::Tunables& tunables, bool gpu, const std::string& program) override {
    check_save_folder(o_.save);
    p_ = make_problem(o_, core, gpu, program);
    if (!o_.load.empty()) {
      initial_ = load_parameters(o_.load, p_.model);
      p_.init = o_.load;
    } else {
      initial_ = he_initialization(p_.model, p_.seed);
    }
    step_ = make_step(tunables);
    if (const std::optional<Accuracy> chosen = step_->accuracy()) accuracy_ = *chosen;
    if (o_.record_images > p_.images())
      throw core::UsageError("--record-images " + std::to_string(o_.record_images) + ": the data set has only " +
                             std::to_string(p_.images()) + " images");
  }

  core::Phases phases() override {
    return {[this] {
              core::NvtxRange r("load");
              step_->load(p_, initial_, p_.batch);
              step_->wait_for_ranks();
            },
            [this] { core::NvtxRange r("compute"); step_->train(p_.steps()); },
            [this] { core::NvtxRange r("store"); step_->store(trained_); }};
  }

  std::string describe() const override {
    return "problem=" + p_.name + " (" + p_.model.describe() + ", " + std::to_string(p_.images()) + " " +
           p_.data->source + " images, batch " + std::to_string(p_.batch) + ", " + std::to_string(p_.steps()) + " steps)";
  }

  core::json problem_json() const override { return {{"name", p_.name}, {"params", p_.params()}, {"digest", p_.digest()}}; }

  void describe_params(core::json& params) const override {
    // A GPU's images per training step: the minibatch, or on several ranks (a multi-GPU step)
    // each one's share of it, with the whole minibatch beside it. The report's ae tables, its
    // scaling table among them, compare runs at the same images a GPU.
    const int ranks = core::ranks().size;
    params["batch"] = p_.batch / ranks;
    if (ranks > 1) params["minibatch"] = p_.batch;
    params["epochs"] = p_.epochs;
    params["lr"] = p_.lr;
    params["momentum"] = p_.momentum;
    core::Fields fields(params);
    step_->describe(fields);
  }

  core::Rate rate(double kernel_ms) const override {
    const double images = double(p_.images_trained());
    return {{{"unit", "images"}, {"count", p_.images_trained()}, {"steps", p_.steps()},
             {"flop", images * training_flop_per_image(p_.model)}, {"flop_per_image", training_flop_per_image(p_.model)}},
            images / (kernel_ms * 1e-3), "images/s"};
  }

  core::Verdict validate(const core::CoreOptions&) override {
    v_ = ae::validate(*step_, p_, initial_, trained_, accuracy_);
    if (o_.record_images > 0) record_reconstructions();
    core::Verdict out;
    out.pass = v_.pass;
    out.failure = v_.failure;
    out.record = validation_record();
    out.summary = summary();
    return out;
  }

  void write_output(const std::string& path, const core::Verdict&) override {
    // float32 [2, k, C, H, W]: the first k images, then the trained model's reconstructions.
    const int k = std::min(kReconstructions, p_.images());
    const size_t image_size = p_.data->image_size();
    std::vector<float> out(2 * size_t(k) * image_size);
    std::copy(p_.data->pixels.begin(), p_.data->pixels.begin() + long(k * image_size), out.begin());
    step_->load(p_, trained_.params, p_.batch);  // validation left the step at its check's weights
    step_->reconstruct(k, out.data() + k * image_size);
    core::write_npy(path, {2, size_t(k), size_t(p_.model.channels), size_t(p_.model.height), size_t(p_.model.width)},
                    out.data());
  }

  void extend_record(core::json& record, const core::Verdict&) const override {
    record["training"] = curve_json(trained_.losses);
    if (!recorded_.is_null()) record["reconstructions"] = recorded_;
  }

  // --save, once the run is complete (also when validation failed: the weights are what a
  // reader inspects then): the weights of the (last) timed training.
  void after_run() override {
    if (!o_.save.empty() && !trained_.params.empty()) save_parameters(o_.save, p_.model, trained_.params);
  }

 private:
  core::json validation_record() const {
    core::ErrorMetrics worst;  // the generic columns: the worst tensor's gradient error
    worst.rel_l2 = v_.worst_gradient;
    worst.max_abs = NAN;
    worst.psnr_db = NAN;
    worst.snr_db = NAN;
    core::json j = core::validation_json("cpu-double", worst, v_.pass);
    j["class"] = accuracy_name(v_.accuracy);
    j["thresholds"] = {{"loss", v_.limits.loss}, {"gradient", v_.limits.gradient}, {"update", v_.limits.update}};
    j["check_images"] = v_.images;
    core::json steps = core::json::array();
    for (const StepCheck& c : v_.steps) {
      core::json t = core::json::object();
      for (const TensorCheck& tc : c.tensors) t[tc.name] = {{"gradient", tc.gradient}, {"update", tc.update}};
      steps.push_back({{"loss", c.loss}, {"reference_loss", c.reference_loss}, {"loss_error", c.loss_error},
                       {"kinks", {{"found", c.kinks_found}, {"examined", c.kinks_examined}, {"flipped", c.kinks_flipped}, {"widest_flipped", c.widest_flipped}, {"widest_examined", c.widest_examined}, {"exact_ties", c.exact_ties}}},
                       {"tensors", t}});
    }
    j["steps"] = steps;
    j["worst"] = {{"loss", v_.worst_loss}, {"gradient", v_.worst_gradient}, {"update", v_.worst_update}};
    if (!v_.replicas_compared.empty()) {
      j["replicas"] = {{"compared", v_.replicas_compared}, {"identical", v_.replicas_differ.empty()}};
      if (!v_.replicas_differ.empty()) j["replicas"]["differ"] = v_.replicas_differ;
    }
    if (v_.goal.applies)
      j["goal"] = {{"step", v_.goal.step}, {"window", v_.goal.window}, {"below", v_.goal.below}, {"loss", v_.goal_loss}};
    else
      j["goal"] = {{"applies", false}, {"why_not", v_.goal.why_not}};
    if (!v_.pass) j["failure"] = v_.failure;
    return j;
  }

  // --record-images N: the first N images and the trained model's reconstructions of them, for
  // the report's grid (inputs above outputs); `mse` is their loss, on the unquantized values.
  void record_reconstructions() {
    const int k = o_.record_images;
    const size_t image_size = p_.data->image_size();
    std::vector<float> output(size_t(k) * image_size);
    step_->load(p_, trained_.params, p_.batch);  // validation left the step at its check's weights
    step_->reconstruct(k, output.data());
    double squared = 0;
    for (size_t i = 0; i < output.size(); ++i) {
      const double d = double(output[i]) - double(p_.data->pixels[i]);
      squared += d * d;
    }
    recorded_ = {{"count", k},
                 {"channels", p_.data->channels},
                 {"height", p_.data->height},
                 {"width", p_.data->width},
                 {"layout", "[image][channel][row][column], row 0 at the top"},
                 {"range", {0.0, 1.0}},
                 {"scale", 1.0 / 255.0},
                 {"mse", squared / double(output.size())},
                 {"input", quantized_images(p_.data->pixels.data(), k, *p_.data)},
                 {"output", quantized_images(output.data(), k, *p_.data)}};
  }

  std::string summary() const {
    std::string s;
    if (!trained_.losses.empty())
      s += "  loss    first step " + sci(trained_.losses.front()) + ", last step " + sci(trained_.losses.back()) + " (" +
           std::to_string(trained_.losses.size()) + " steps)\n";
    const StepCheck& a = v_.steps.front();
    s += "  check   " + std::string(v_.pass ? "PASS" : "FAIL") + " (" + accuracy_name(v_.accuracy) + ") vs cpu-double, " +
         std::to_string(kCheckSteps) + " steps of " + std::to_string(v_.images) + " images: loss error " + sci(v_.worst_loss) +
         " (limit " + sci(v_.limits.loss) + "), worst gradient " + sci(v_.worst_gradient) + " (limit " +
         sci(v_.limits.gradient) + "; step 1: " + a.tensors[a.worst_gradient].name + "), worst update " +
         sci(v_.worst_update) + " (limit " + sci(v_.limits.update) + ")\n";
    if (!v_.replicas_compared.empty())
      s += "  ranks   " + (v_.replicas_differ.empty() ? "weights identical on every rank after every step (" + v_.replicas_compared + ")"
                                                       : "weights DIFFER: " + v_.replicas_differ) + "\n";
    if (v_.goal.applies)
      s += "  goal    mean loss of steps " + std::to_string(v_.goal.step - v_.goal.window + 1) + ".." +
           std::to_string(v_.goal.step) + ": " + sci(v_.goal_loss) + " (goal: below " + sci(v_.goal.below) + ")\n";
    else
      s += "  goal    not checked: " + v_.goal.why_not + "\n";
    return s;
  }

  Accuracy accuracy_;
  Options o_;
  Problem p_;
  std::vector<float> initial_;
  Trained trained_;
  Verdict v_;
  std::unique_ptr<Step> step_;
  core::json recorded_;  // --record-images: null when not asked for
};

}  // namespace
}  // namespace ae

int main(int argc, char** argv) {
  const ae::StepInfo info = ae::step_info();
  ae::AeTrack track(info.accuracy);
  return core::run_step_program(track, {"ae", info.id, info.title, info.gpu, info.tunables, info.flag_defaults, info.multi_gpu}, argc, argv);
}
