// The convolutional autoencoder: five 3x3 convolutions (padding 1, stride 1) with ReLU,
// 2x2 max pooling on the way down and x2 nearest-neighbour upsampling on the way up:
//
//   x (C, H, W)
//   conv1 C -> enc1, ReLU, maxpool 2       (enc1, H/2, W/2)
//   conv2 enc1 -> enc2, ReLU, maxpool 2    (enc2, H/4, W/4)   the latent code
//   conv3 enc2 -> dec1, ReLU, upsample 2   (dec1, H/2, W/2)
//   conv4 dec1 -> dec2, ReLU, upsample 2   (dec2, H, W)
//   conv5 dec2 -> C                        (C, H, W)          the reconstruction
//
// and the loss is the mean squared error over every pixel of the minibatch. The full model
// (C 3, widths 256, 128, 128, 256, 32x32 images) has 751,875 parameters; the widths and the
// image size are parameters so that tests can use a model small enough for finite differences.
//
// Parameters live in one flat float vector, tensor after tensor in the order of tensors():
// conv1.weight (out, in, 3, 3), conv1.bias (out), conv2.weight, ... the layout and names of
// PyTorch's state_dict for nn.Conv2d, so that saved weights load there unchanged.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // json() only declared: GPU steps include this header

namespace ae {

constexpr int kLayers = 5;

struct Model {
  int channels = 3;  // of the image, in and out
  int height = 32, width = 32;  // multiples of 4 (two poolings)
  int enc1 = 256, enc2 = 128, dec1 = 128, dec2 = 256;

  static Model full() { return Model{}; }
  nlohmann::json json() const;
  std::string describe() const;  // "3-256-128-128-256-3 on 32x32"
};

// One convolution of the model: `in` channels to `out` channels on a height x width grid
// (the input's grid; padding 1 keeps it), and where its tensors sit in the flat vector.
struct Conv {
  int in = 0, out = 0, height = 0, width = 0;
  size_t weight = 0, bias = 0;  // offsets of the weight (out, in, 3, 3) and the bias (out)
  size_t weight_count() const { return size_t(out) * in * 9; }
  size_t pixels() const { return size_t(height) * width; }
  // Multiply-adds of the forward pass for one image.
  double macs() const { return double(out) * in * 9 * height * width; }
};

std::array<Conv, kLayers> layers(const Model& m);

// A named tensor of the flat parameter vector.
struct Tensor {
  std::string name;  // "conv2.weight"
  size_t offset = 0, count = 0;
  std::vector<size_t> shape;
};
std::vector<Tensor> tensors(const Model& m);
size_t parameter_count(const Model& m);

// Floating-point operations of one training step per image, counting the convolutions only:
// the forward pass (2 x macs per layer), the weight gradient (2 x macs per layer) and the
// input gradient (2 x macs per layer, except conv1, whose input is the image). Bias, ReLU,
// pooling, loss and update add < 0.5 %. The full model: 1,033,371,648 (~1.03 GFLOP).
double training_flop_per_image(const Model& m);
double forward_flop_per_image(const Model& m);

// He et al. (2015) initialization: weights normal with variance 2 / fan_in (fan_in = in x 9),
// biases zero. Deterministic for a seed: SplitMix64 and Box-Muller, not <random>'s
// distributions, whose algorithms the standard leaves to each library (tests/ae pins values).
std::vector<float> he_initialization(const Model& m, uint64_t seed);

// SplitMix64 (Steele, Lea and Flood 2014): the project's small deterministic generator for
// the synthetic images and the initialization.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double normal();  // Box-Muller

 private:
  uint64_t state_;
};

// Weights as one .npy file per tensor in a folder: DIR/conv1.weight.npy, DIR/conv1.bias.npy,
// ... float32, the shapes of tensors(). The reader is strict: every file must be there with
// exactly its dtype and shape, and every value finite (core::UsageError naming the file).
void save_parameters(const std::string& dir, const Model& m, const std::vector<float>& params);
std::vector<float> load_parameters(const std::string& dir, const Model& m);

}  // namespace ae
