#include "ae/model.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <filesystem>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace ae {

nlohmann::json Model::json() const {
  return {{"channels", channels}, {"height", height}, {"width", width},
          {"widths", {enc1, enc2, dec1, dec2}}, {"parameters", parameter_count(*this)}};
}

std::string Model::describe() const {
  return std::to_string(channels) + "-" + std::to_string(enc1) + "-" + std::to_string(enc2) + "-" +
         std::to_string(dec1) + "-" + std::to_string(dec2) + "-" + std::to_string(channels) + " on " +
         std::to_string(height) + "x" + std::to_string(width);
}

std::array<Conv, kLayers> layers(const Model& m) {
  std::array<Conv, kLayers> c;
  c[0] = {m.channels, m.enc1, m.height, m.width};
  c[1] = {m.enc1, m.enc2, m.height / 2, m.width / 2};
  c[2] = {m.enc2, m.dec1, m.height / 4, m.width / 4};
  c[3] = {m.dec1, m.dec2, m.height / 2, m.width / 2};
  c[4] = {m.dec2, m.channels, m.height, m.width};
  size_t offset = 0;
  for (Conv& l : c) {
    l.weight = offset;
    offset += l.weight_count();
    l.bias = offset;
    offset += size_t(l.out);
  }
  return c;
}

std::vector<Tensor> tensors(const Model& m) {
  std::vector<Tensor> t;
  const auto convs = layers(m);
  for (int l = 0; l < kLayers; ++l) {
    const Conv& c = convs[l];
    const std::string name = "conv" + std::to_string(l + 1);
    t.push_back({name + ".weight", c.weight, c.weight_count(), {size_t(c.out), size_t(c.in), 3, 3}});
    t.push_back({name + ".bias", c.bias, size_t(c.out), {size_t(c.out)}});
  }
  return t;
}

size_t parameter_count(const Model& m) {
  const Conv last = layers(m)[kLayers - 1];
  return last.bias + size_t(last.out);
}

double forward_flop_per_image(const Model& m) {
  double flop = 0;
  for (const Conv& c : layers(m)) flop += 2 * c.macs();
  return flop;
}

double training_flop_per_image(const Model& m) {
  const auto convs = layers(m);
  double flop = 0;
  for (int l = 0; l < kLayers; ++l) flop += 2 * convs[l].macs() * (l == 0 ? 2 : 3);
  return flop;
}

double SplitMix64::normal() {
  // Box-Muller on (0, 1]: 1 - uniform() is never 0, so the log is finite.
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

std::vector<float> he_initialization(const Model& m, uint64_t seed) {
  std::vector<float> p(parameter_count(m), 0.0f);
  const auto convs = layers(m);
  for (int l = 0; l < kLayers; ++l) {
    const Conv& c = convs[l];
    // One stream per layer: a layer's weights do not change when another layer's width does.
    SplitMix64 rng(seed * 0x100000001b3ull + uint64_t(l + 1) * 0x9e3779b97f4a7c15ull);
    const double stddev = std::sqrt(2.0 / (double(c.in) * 9));
    for (size_t i = 0; i < c.weight_count(); ++i) p[c.weight + i] = float(stddev * rng.normal());
  }
  return p;
}

void save_parameters(const std::string& dir, const Model& m, const std::vector<float>& params) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw core::UsageError("--save " + dir + ": cannot create the folder");
  for (const Tensor& t : tensors(m))
    core::write_npy((fs::path(dir) / (t.name + ".npy")).string(), t.shape, params.data() + t.offset);
}

std::vector<float> load_parameters(const std::string& dir, const Model& m) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw core::UsageError("--load " + dir + ": not a folder (want one .npy file per tensor: conv1.weight.npy, ...)");
  std::vector<float> params(parameter_count(m));
  for (const Tensor& t : tensors(m)) {
    const std::string path = (fs::path(dir) / (t.name + ".npy")).string();
    if (!fs::exists(path, ec))
      throw core::UsageError("--load " + dir + ": " + t.name + ".npy is missing (the model " + m.describe() +
                             " needs " + std::to_string(tensors(m).size()) + " tensors)");
    const std::vector<float> values = core::read_npy_as<float>(path, t.shape);
    for (size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        throw core::UsageError(path + ": element " + std::to_string(i) + " is not finite");
    std::copy(values.begin(), values.end(), params.begin() + long(t.offset));
  }
  return params;
}

}  // namespace ae
