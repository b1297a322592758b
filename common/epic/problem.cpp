#include "epic/problem.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/npy.hpp"

namespace epic {

namespace {
constexpr size_t kMaxVoltageBytes = size_t(1) << 31;

std::string mhz(double hz) {
  char b[32];
  snprintf(b, sizeof b, "%.3f", hz * 1e-6);
  return b;
}
}  // namespace

Preset preset_of_size(const std::string& size) {
  if (size == "tiny") return {2, 8};
  if (size == "small") return {16, 100};
  if (size == "large") return {132, 1000};
  throw core::UsageError("--size " + size + ": not tiny, small or large");
}

std::vector<double> Problem::wavelengths() const {
  std::vector<double> w(size_t(obs.channels));
  for (int c = 0; c < obs.channels; ++c) w[size_t(c)] = obs.wavelength(c);
  return w;
}

void check_observation(const Observation& obs, int stands) {
  if (obs.channels < 1 || obs.channels > kMaxChannels)
    throw core::UsageError("--channels " + std::to_string(obs.channels) + ": not in 1 .. " + std::to_string(kMaxChannels));
  if (obs.pols < 1 || obs.pols > 2) throw core::UsageError("--pols " + std::to_string(obs.pols) + ": not 1 or 2");
  if (obs.samples_per_gulp < 1 || obs.gulps < 1) throw core::UsageError("--samples/--gulps: at least 1");
  const double top = obs.frequency(obs.channels - 1);
  if (obs.first_channel_hz < kBandLowHz || top > kBandHighHz)
    throw core::UsageError("--start-freq " + mhz(obs.first_channel_hz) + " MHz with " + std::to_string(obs.channels) +
                           " channels spans " + mhz(obs.first_channel_hz) + " .. " + mhz(top) +
                           " MHz, outside LWA-SV's band (10 .. 88 MHz)");
  if (obs.voltage_bytes(stands) > kMaxVoltageBytes)
    throw core::UsageError("the voltages would take " + std::to_string(obs.voltage_bytes(stands) >> 20) +
                           " MiB (samples x channels x stands x pols); the limit is 2048 MiB: fewer --samples or --gulps");
}

void simulate_voltages(Problem& p) {
  check_observation(p.obs, p.station.size());
  p.voltages = simulate(p.station, p.sky, p.obs, p.seed);
}

void finish(Problem& p) {
  const GriddingKernel kernel(p.imaging.kernel, p.imaging.support);
  p.imaging.kernel = kernel.kind();
  p.plan = make_plan(p.station, p.wavelengths(), p.imaging.grid_spacing, p.imaging.image_size, kernel);
  p.correction = grid_correction(kernel, p.imaging.image_size);
}

nlohmann::json Problem::params() const {
  nlohmann::json j = {{"image_size", imaging.image_size},
                      {"channels", obs.channels},
                      {"pols", obs.pols},
                      {"samples_per_gulp", obs.samples_per_gulp},
                      {"gulps", obs.gulps},
                      {"stands", station.size()},
                      {"station", station.name},
                      {"first_channel_mhz", obs.first_channel_hz * 1e-6},
                      {"grid_spacing", imaging.grid_spacing},
                      {"support", imaging.support},
                      {"kernel", kernel_name(imaging.kernel)},
                      {"products", products_string(imaging.products)},
                      {"no_autos", imaging.remove_autos}};
  const std::string size = name.substr(0, name.find('-'));  // "large-128" is generated too
  if (size == "tiny" || size == "small" || size == "large" || size == "custom") j["seed"] = seed;
  return j;
}

std::string Problem::digest() const {
  uint64_t h = 1469598103934665603ull;
  auto eat = [&h](const void* data, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  const std::string text = params().dump();
  eat(text.data(), text.size());
  for (const auto* v : {&station.east, &station.north, &station.up}) eat(v->data(), v->size() * sizeof(double));
  eat(voltages.data(), voltages.size());
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// load_folder without the translation of a mistyped field into a usage error.
static Problem read_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw core::UsageError("--input " + dir + ": not a problem folder (missing or not a directory)");
  const std::string meta_path = dir + "/meta.json";
  nlohmann::json meta;
  {
    std::ifstream in = core::open_input_file(meta_path);
    try {
      meta = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw core::UsageError(meta_path + ": not valid JSON (" + e.what() + ")");
    }
  }
  if (!meta.is_object() || meta.value("format", "") != "stepwise-epic")
    throw core::UsageError(meta_path + ": 'format' must be \"stepwise-epic\"");
  auto count = [&](const char* key, long lo, long hi) -> int {
    if (!meta.contains(key) || !meta[key].is_number_integer() || meta[key].get<long long>() < lo || meta[key].get<long long>() > hi)
      throw core::UsageError(meta_path + ": '" + key + "' must be a whole number in " + std::to_string(lo) + " .. " + std::to_string(hi));
    return int(meta[key].get<long long>());
  };
  Problem p;
  p.name = fs::path(dir).filename().string();
  if (p.name.empty()) p.name = fs::path(dir).parent_path().filename().string();
  const int samples = count("samples", 1, 1 << 20);
  p.obs.channels = count("channels", 1, kMaxChannels);
  p.obs.pols = count("pols", 1, 2);
  const int stands = count("stands", 2, kMaxStands);
  p.obs.samples_per_gulp = meta.contains("samples_per_gulp") ? count("samples_per_gulp", 1, samples) : samples;
  if (samples % p.obs.samples_per_gulp)
    throw core::UsageError(meta_path + ": 'samples' (" + std::to_string(samples) + ") is not a whole number of gulps of " +
                           std::to_string(p.obs.samples_per_gulp));
  p.obs.gulps = samples / p.obs.samples_per_gulp;
  if (!meta.contains("first_channel_mhz") || !meta["first_channel_mhz"].is_number())
    throw core::UsageError(meta_path + ": 'first_channel_mhz' (centre of the first channel) must be a number");
  p.obs.first_channel_hz = meta["first_channel_mhz"].get<double>() * 1e6;
  if (meta.contains("channel_width_hz") && (!meta["channel_width_hz"].is_number() || meta["channel_width_hz"].get<double>() != kChannelWidthHz))
    throw core::UsageError(meta_path + ": 'channel_width_hz' must be 25000 (LWA-SV's channels)");
  try {
    check_observation(p.obs, stands);
  } catch (const core::UsageError& e) {
    throw core::UsageError(meta_path + ": " + e.what());
  }
  p.station = read_stands(dir + "/stands.csv");
  if (p.station.size() != stands)
    throw core::UsageError(dir + "/stands.csv: " + std::to_string(p.station.size()) + " stands, meta.json says " + std::to_string(stands));
  p.voltages = core::read_npy_as<uint8_t>(dir + "/voltages.npy", {size_t(samples), size_t(p.obs.channels), size_t(stands), size_t(p.obs.pols)});
  if (meta.contains("sources")) {
    const auto& list = meta["sources"];
    if (!list.is_array()) throw core::UsageError(meta_path + ": 'sources' must be a list");
    for (const auto& s : list) {
      if (!s.is_object() || !s.contains("l") || !s.contains("m") || !s.contains("flux_74") || !s["l"].is_number() ||
          !s["m"].is_number() || !s["flux_74"].is_number())
        throw core::UsageError(meta_path + ": each source needs numbers l, m, flux_74");
      Source src{s.value("name", "source"), s["l"].get<double>(), s["m"].get<double>(), s["flux_74"].get<double>(),
                 s.value("spectral_index", 0.0)};
      if (!(src.l * src.l + src.m * src.m < 1) || !std::isfinite(src.flux_74) || src.flux_74 <= 0)
        throw core::UsageError(meta_path + ": source '" + src.name + "' is not above the horizon with a positive flux");
      p.sky.sources.push_back(src);
    }
    p.has_sky = !p.sky.sources.empty();
  }
  return p;
}

Problem load_folder(const std::string& dir) {
  try {
    return read_folder(dir);
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type ("format": 3, "spectral_index": "x") is bad input, not a crash.
    throw core::UsageError(dir + "/meta.json: a field has the wrong type (" + e.what() + ")");
  }
}

void save_folder(const Problem& p, const std::string& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json meta = {{"format", "stepwise-epic"},
                         {"samples", p.obs.samples()},
                         {"samples_per_gulp", p.obs.samples_per_gulp},
                         {"channels", p.obs.channels},
                         {"stands", p.station.size()},
                         {"pols", p.obs.pols},
                         {"first_channel_mhz", p.obs.first_channel_hz * 1e-6},
                         {"channel_width_hz", kChannelWidthHz},
                         {"sample_seconds", kSampleSeconds},
                         {"made_by", "stepwise epic simulator"},
                         {"problem", p.name},
                         {"seed", p.seed}};
  if (p.has_sky) {
    nlohmann::json list = nlohmann::json::array();
    for (const Source& s : p.sky.sources)
      list.push_back({{"name", s.name}, {"l", s.l}, {"m", s.m}, {"flux_74", s.flux_74}, {"spectral_index", s.spectral_index}});
    meta["sources"] = list;
  }
  std::ofstream(dir + "/meta.json") << meta.dump(2) << '\n';
  std::ofstream st(dir + "/stands.csv");
  st << "stand,east_m,north_m,up_m\n";
  char line[128];
  for (int a = 0; a < p.station.size(); ++a) {
    snprintf(line, sizeof line, "%d,%.17g,%.17g,%.17g\n", a + 1, p.station.east[size_t(a)], p.station.north[size_t(a)], p.station.up[size_t(a)]);
    st << line;
  }
  core::write_npy<uint8_t>(dir + "/voltages.npy",
                           {size_t(p.obs.samples()), size_t(p.obs.channels), size_t(p.station.size()), size_t(p.obs.pols)},
                           p.voltages.data());
}

}  // namespace epic
