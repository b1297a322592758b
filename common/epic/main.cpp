// The EPIC harness: main() of every EPIC step program, on the shared loop (core/harness.hpp).
// What is EPIC's own: the station, observation and imaging flags, the simulated sky and the
// F-engine voltages (or a folder of them), the gridding plan and grid correction the steps
// read, validation against the double-precision references, the image as output, and the
// time per gulp against real time.
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/harness.hpp"
#include "epic/inputs.hpp"
#include "core/npy.hpp"
#include "core/nvtx.hpp"
#include "epic/problem.hpp"
#include "epic/step.hpp"
#include "epic/validation.hpp"

namespace epic {
namespace {

struct Options {
  int image_size = 64;
  double grid_spacing = 0.5;
  int support = 2;
  std::string kernel = "pswf";
  int channels = 0, samples = 0, gulps = 0, pols = 0;  // 0: from --size
  double start_mhz = 0;                                 // 0: 38 MHz
  std::string products, stands, reference = "fx";
  bool no_autos = false;
  bool sky = false;  // record the total-intensity image (the report's sky)
};

void add_problem_options(CLI::App& app, Options& o) {
  app.add_option("--image-size", o.image_size, "Image (and grid) size N: 64 or 128")
      ->check(CLI::IsMember({64, 128}))->capture_default_str();
  app.add_option("--grid-spacing", o.grid_spacing, "Grid cell in wavelengths; the image spans l in [-1/(2 s), 1/(2 s))")
      ->check(core::FiniteRange(0.05, 4.0))->capture_default_str();
  app.add_option("--support", o.support, "Gridding support in cells, 1 .. 3 (1: nearest cell)")
      ->check(CLI::Range(1, 3))->capture_default_str();
  app.add_option("--kernel", o.kernel, "Gridding kernel for support 2 and 3")
      ->check(CLI::IsMember({"pswf", "kaiser-bessel"}))->capture_default_str();
  app.add_option("--channels", o.channels, "Channels of 25 kHz (overrides --size), 1 .. 132")->check(CLI::Range(1, kMaxChannels));
  app.add_option("--samples", o.samples, "Samples of 40 us per gulp (overrides --size), 1 .. 4000")->check(CLI::Range(1, 4000));
  app.add_option("--gulps", o.gulps, "Gulps accumulated into the image, 1 .. 64")->check(CLI::Range(1, 64));
  app.add_option("--pols", o.pols, "Polarizations, 1 (X) or 2 (X, Y)")->check(CLI::Range(1, 2));
  app.add_option("--start-freq", o.start_mhz, "Centre of the first channel, MHz (default 38)")->check(core::FiniteRange(10.0, 88.0));
  app.add_option("--products", o.products, "Comma-separated products: XX, YY, XY (XY*), YX (YX*), I (default XX,YY,XY,YX; XX with one pol)");
  app.add_flag("--no-autos", o.no_autos, "Remove the autocorrelations from the image (exactly)");
  app.add_flag("--sky", o.sky, "Put the total-intensity image over the band and the sources in view into the results "
                               "record (--json), for the report's sky image");
  app.add_option("--stands", o.stands, "Stand positions: CSV with east, north, up columns in metres (datasets/epic.md)");
  app.add_option("--reference", o.reference, "Reference to validate against: fx (the correlator) or beamformer (per sample)")
      ->check(CLI::IsMember({"fx", "beamformer"}))->capture_default_str();
}

Problem make_problem(const Options& o, const core::CoreOptions& core) {
  Problem p;
  if (!core.input.empty()) {
    if (o.channels || o.samples || o.gulps || o.pols || o.start_mhz || !o.stands.empty())
      throw core::UsageError("--input " + core.input + ": the folder sets the station and the observation; "
                             "--channels, --samples, --gulps, --pols, --start-freq and --stands apply to generated problems only");
    p = load_folder(core.input);
  } else {
    const Preset preset = preset_of_size(core.size);
    p.seed = core.seed;
    p.obs.channels = o.channels ? o.channels : preset.channels;
    p.obs.samples_per_gulp = o.samples ? o.samples : preset.samples_per_gulp;
    p.obs.gulps = o.gulps ? o.gulps : 1;
    p.obs.pols = o.pols ? o.pols : 2;
    // The preset's name, then what differs from it ("large-gulps4"): a table of the report
    // then says which problem it is.
    p.name = core.size;
    if (p.obs.channels != preset.channels) p.name += "-ch" + std::to_string(p.obs.channels);
    if (p.obs.samples_per_gulp != preset.samples_per_gulp) p.name += "-samples" + std::to_string(p.obs.samples_per_gulp);
    if (p.obs.gulps != 1) p.name += "-gulps" + std::to_string(p.obs.gulps);
    if (p.obs.pols != 2) p.name += "-pols" + std::to_string(p.obs.pols);
    if (o.start_mhz) p.obs.first_channel_hz = o.start_mhz * 1e6;
    p.station = o.stands.empty() ? generate_station(core.seed) : read_stands(o.stands);
    check_observation(p.obs, p.station.size());
    p.sky = default_sky(core.seed);
    p.has_sky = true;
  }
  p.imaging.image_size = o.image_size;
  // A generated problem imaged at 128 x 128 is another problem in the records ("large-128"):
  // its rows must not stand in the 64 x 64 tables.
  if (core.input.empty() && o.image_size != 64) p.name += "-" + std::to_string(o.image_size);
  p.imaging.grid_spacing = o.grid_spacing;
  p.imaging.support = o.support;
  p.imaging.kernel = o.kernel == "kaiser-bessel" ? KernelKind::kaiser_bessel : KernelKind::pswf;
  p.imaging.products = o.products.empty() ? default_products(p.obs.pols) : parse_products(o.products, p.obs.pols);
  p.imaging.remove_autos = o.no_autos;
  if (core.input.empty()) simulate_voltages(p);
  finish(p);
  return p;
}

class EpicTrack final : public core::Track {
 public:
  explicit EpicTrack(Accuracy accuracy) : accuracy_(accuracy) {}

  void add_options(CLI::App& app) override { add_problem_options(app, o_); }

  void prepare(const core::CoreOptions& core, const core::Tunables& tunables, bool, const std::string&) override {
    reference_ = o_.reference == "beamformer" ? ReferenceKind::beamformer : ReferenceKind::fx;
    p_ = make_problem(o_, core);
    inputs_ = std::make_unique<StepInputs>(p_);
    in_ = inputs_->get();
    image_.assign(in_.image_values(), 0.0f);
    step_ = make_step(tunables);
  }

  core::Phases phases() override {
    return {[this] { core::NvtxRange r("load"); step_->load(in_); },
            [this] { core::NvtxRange r("compute"); step_->compute(); },
            [this] { core::NvtxRange r("store"); step_->store(image_.data()); }};
  }

  std::string describe() const override {
    char text[512];
    snprintf(text, sizeof text, "problem=%s (%d stands, %d channels x %d samples x %d gulp%s, %d pol%s, %dx%d, support %d %s, %s%s)",
             p_.name.c_str(), p_.station.size(), p_.obs.channels, p_.obs.samples_per_gulp, p_.obs.gulps,
             p_.obs.gulps > 1 ? "s" : "", p_.obs.pols, p_.obs.pols > 1 ? "s" : "", p_.imaging.image_size,
             p_.imaging.image_size, p_.imaging.support, kernel_name(p_.imaging.kernel),
             products_string(p_.imaging.products).c_str(), p_.imaging.remove_autos ? ", no autos" : "");
    return text;
  }

  core::json problem_json() const override { return {{"name", p_.name}, {"params", p_.params()}, {"digest", p_.digest()}}; }

  void describe_params(core::json& params) const override {
    params["accuracy"] = accuracy_name(accuracy_);
    core::Fields fields(params);
    step_->describe(fields);
  }

  core::Rate rate(double kernel_ms) const override {
    const Observation& o = p_.obs;
    const double n = p_.imaging.image_size;
    const double samples = double(o.samples()) * o.channels * p_.station.size() * o.pols;
    const double transforms = double(o.samples()) * o.channels * o.pols;
    ms_per_gulp_ = kernel_ms / o.gulps;
    realtime_ = o.gulp_seconds() * 1e3 / ms_per_gulp_;
    // A radix-2 complex FFT of n x n points: 5 n^2 log2(n^2) flop (the usual count).
    return {{{"unit", "voltage samples"}, {"count", samples}, {"gulps", o.gulps}, {"samples_per_gulp", o.samples_per_gulp},
             {"transforms", transforms}, {"fft_flop", transforms * 5 * n * n * std::log2(n * n)},
             {"voltage_bytes", double(o.voltage_bytes(p_.station.size()))}},
            ms_per_gulp_, "ms/gulp"};
  }

  core::Verdict validate(const core::CoreOptions& core) override {
    v_ = epic::validate(p_, accuracy_, image_.data(), core.seed, reference_);
    core::Verdict out;
    out.pass = v_.pass;
    out.record = core::validation_json(reference_name(reference_), v_.metrics, v_.pass);
    out.record["class"] = accuracy_name(accuracy_);
    out.record["threshold"] = v_.threshold;
    out.record["worst_plane_rel_l2"] = std::isfinite(v_.worst) ? core::json(v_.worst) : core::json(nullptr);
    core::json planes = core::json::object();
    for (size_t q = 0; q < v_.planes.size(); ++q)
      planes[v_.planes[q]] = std::isfinite(v_.plane_rel_l2[q]) ? core::json(v_.plane_rel_l2[q]) : core::json(nullptr);
    out.record["plane_rel_l2"] = planes;
    out.record["channels"] = v_.channels;
    out.record["channels_subset"] = int(v_.channels.size()) < p_.obs.channels;
    core::json peak = {{"done", v_.peak.done}};
    if (v_.peak.done)
      peak.update({{"source", v_.peak.source}, {"l", v_.peak.l}, {"m", v_.peak.m},
                   {"expect", {v_.peak.expect_l, v_.peak.expect_m}}, {"found", {v_.peak.found_l, v_.peak.found_m}},
                   {"fraction_of_peak", v_.peak.fraction}, {"pass", v_.peak.pass}});
    else
      peak["why_not"] = v_.peak.why_not;
    out.record["peak"] = peak;
    // Every channel and plane against the correlator's zero baseline (validation.hpp).
    const PowerCheck& w = v_.power;
    out.record["zero_baseline"] = {{"worst", std::isfinite(w.worst) ? core::json(w.worst) : core::json(nullptr)},
                                   {"channel", w.worst_channel}, {"plane", v_.planes.empty() ? "" : v_.planes[size_t(w.worst_plane)]},
                                   {"threshold", w.threshold}, {"channel_planes", w.error.size()},
                                   {"failing", w.failing}, {"pass", w.pass}};
    if (!v_.pass) out.record["failure"] = v_.failure;
    out.failure = v_.failure;
    out.summary = summary();
    return out;
  }

  void write_output(const std::string& path, const core::Verdict&) override {
    const size_t n = size_t(p_.imaging.image_size);
    core::write_npy<float>(path, {size_t(in_.planes), size_t(p_.obs.channels), n, n}, image_.data());
  }

  void extend_record(core::json& record, const core::Verdict&) const override {
    record["throughput"]["realtime_factor"] = realtime_;
    record["throughput"]["gulp_ms_of_sky"] = p_.obs.gulp_seconds() * 1e3;
    record["image"] = {{"planes", plane_names(p_.imaging.products)}, {"layout", "(plane, channel, m, l)"}};
    if (o_.sky) record["sky"] = sky_json();
  }

 private:
  // The total-intensity image over the band, scaled to its peak (4 significant digits: a
  // picture, not a measurement), and the named sources in view: the report's sky image.
  core::json sky_json() const {
    core::json sky = {{"image_size", p_.imaging.image_size}, {"layout", "(m, l), l = (column - N/2) / (N grid_spacing)"},
                      {"grid_spacing", p_.imaging.grid_spacing}};
    std::string why;
    const std::vector<double> total = total_intensity(p_, image_.data(), &why);
    if (total.empty()) {
      sky["why_not"] = why;
      return sky;
    }
    const double peak = *std::max_element(total.begin(), total.end());
    const size_t n = size_t(p_.imaging.image_size);
    core::json rows = core::json::array();
    for (size_t m = 0; m < n; ++m) {
      core::json row = core::json::array();
      for (size_t l = 0; l < n; ++l) {
        const double v = peak > 0 ? total[m * n + l] / peak : 0.0;
        row.push_back(std::round(v * 1e4) / 1e4);
      }
      rows.push_back(row);
    }
    sky["peak"] = peak;
    sky["intensity"] = rows;
    core::json sources = core::json::array();
    for (const SkyMark& k : sky_marks(p_))
      sources.push_back({{"name", k.name}, {"l", k.l}, {"m", k.m}, {"flux_jy", k.flux}, {"pixel", {k.pixel_l, k.pixel_m}}});
    sky["sources"] = sources;
    return sky;
  }

  std::string summary() const {
    std::string s;
    char line[768];
    const size_t worst = v_.plane_rel_l2.empty() ? 0 : size_t(std::max_element(v_.plane_rel_l2.begin(), v_.plane_rel_l2.end()) - v_.plane_rel_l2.begin());
    std::string which;
    if (int(v_.channels.size()) < p_.obs.channels) {
      which = std::to_string(v_.channels.size()) + " of " + std::to_string(p_.obs.channels) + " channels (seeded sample with the first and last: ";
      for (size_t k = 0; k < v_.channels.size(); ++k) which += (k ? " " : "") + std::to_string(v_.channels[k]);
      which += ")";
    } else {
      which = "all " + std::to_string(p_.obs.channels) + " channel" + (p_.obs.channels > 1 ? "s" : "");
    }
    snprintf(line, sizeof line, "  check   %s vs %s on %s: worst plane %s rel_l2 %.3g (limit %.3g, %s), all planes rel_l2 %.3g\n",
             v_.pass ? "PASS" : "FAIL", reference_name(reference_), which.c_str(),
             v_.planes.empty() ? "-" : v_.planes[worst].c_str(), v_.worst, v_.threshold, accuracy_name(accuracy_),
             v_.metrics.rel_l2);
    s += line;
    snprintf(line, sizeof line, "  power   %s vs the correlator's zero baseline on all %zu channel planes: worst %.3g of the "
             "autocorrelation power (channel %d, %s; limit %.3g, %s)\n",
             v_.power.pass ? "PASS" : "FAIL", v_.power.error.size(), v_.power.worst, v_.power.worst_channel,
             v_.planes.empty() ? "-" : v_.planes[size_t(v_.power.worst_plane)].c_str(), v_.power.threshold, accuracy_name(accuracy_));
    s += line;
    if (v_.peak.done)
      snprintf(line, sizeof line, "  peak    %s at (l, m) = (%.4f, %.4f), pixel (%d, %d): the peak near it is at (%d, %d), %.2f of the image's peak: %s\n",
               v_.peak.source.c_str(), v_.peak.l, v_.peak.m, v_.peak.expect_l, v_.peak.expect_m, v_.peak.found_l,
               v_.peak.found_m, v_.peak.fraction, v_.peak.pass ? "PASS" : "FAIL");
    else
      snprintf(line, sizeof line, "  peak    not checked: %s\n", v_.peak.why_not.c_str());
    s += line;
    snprintf(line, sizeof line, "  speed   %.4g ms per gulp of %.4g ms of sky: %.3gx real time\n", ms_per_gulp_,
             p_.obs.gulp_seconds() * 1e3, realtime_);
    s += line;
    return s;
  }

  Accuracy accuracy_;
  Options o_;
  ReferenceKind reference_ = ReferenceKind::fx;
  Problem p_;
  std::unique_ptr<StepInputs> inputs_;
  Inputs in_{};
  std::vector<float> image_;
  Verdict v_;
  mutable double ms_per_gulp_ = 0, realtime_ = 0;
  std::unique_ptr<Step> step_;
};

}  // namespace
}  // namespace epic

int main(int argc, char** argv) {
  const epic::StepInfo info = epic::step_info();
  epic::EpicTrack track(info.accuracy);
  return core::run_step_program(track, {"epic", info.id, info.title, info.gpu, info.tunables, info.flag_defaults, info.multi_gpu}, argc, argv);
}
