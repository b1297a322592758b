// One training problem: the model, the images, and the schedule of minibatch SGD.
//
// Training step t (counted from the start of a run) trains on minibatch t mod S, S =
// floor(images / batch), the images [s batch, (s + 1) batch) in the order of the set: no
// shuffling, so that every step (and the PyTorch peer) sees the same minibatches; the last
// images / batch remainder is left out of every epoch (PyTorch's drop_last).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>  // params() only declared: GPU steps include this header

#include "ae/data.hpp"
#include "ae/model.hpp"

namespace ae {

// The built-in sizes (steps/ae/README.md, "Presets"):
//   tiny   model 3-16-8-8-16-3 on 16x16, 128 synthetic images, batch 8, 4 epochs (tests, well under a second)
//   small  the full model, 384 synthetic 32x32 images, batch 16, 1 epoch (00_cpu in about a minute)
//   large  the full model, 50,000 synthetic 32x32 images (CIFAR-10's training set size), batch 64,
//          1 epoch (the GPU scale; CPU steps refuse it unless --images says how many)
struct Preset {
  Model model;
  int images = 0, batch = 0, epochs = 0;
};
Preset preset(const std::string& size);

// The loss that correct training reaches on a preset's synthetic set: the mean loss of the
// `window` training steps that end with step `step` (1-based) must be below `below`.
// Values from measurement (steps/ae/README.md, "Validation").
struct TrainingGoal {
  bool applies = false;
  std::string why_not;  // when it does not apply: what differs from the preset's schedule
  int step = 0, window = 0;
  double below = 0;
};

struct Problem {
  std::string name;  // tiny | small | large, or custom (other images or widths than the preset's)
  std::string size;  // the preset the widths, batch and epochs defaults came from
  Model model;
  std::shared_ptr<const ImageSet> data;
  int batch = 64, epochs = 1;
  double lr = 0.001, momentum = 0.0;
  uint64_t seed = 1;
  std::string init = "he";  // "he" (He et al. 2015, from the seed) or the --load folder

  int images() const { return data->count; }
  int steps_per_epoch() const { return data->count / batch; }
  int steps() const { return steps_per_epoch() * epochs; }
  long long images_trained() const { return (long long)steps() * batch; }
  nlohmann::json params() const;
  std::string digest() const;  // FNV-1a of the parameters and the pixels
  TrainingGoal training_goal() const;
};

// The first image of the minibatch of training step t (0-based, counted from a run's start).
inline size_t minibatch_start(long long t, int batch, int images) {
  return size_t(t % (images / batch)) * size_t(batch);
}

}  // namespace ae
