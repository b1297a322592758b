#include "model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace report {

namespace {

const std::vector<Track>& known_tracks() {
  static const std::vector<Track> tracks = {
      {"mri", "F^H d and Q of the non-Cartesian MRI reconstruction", "kernel",
       {{"SFU sin/cos pairs", "", "pairs/s", "sfu_per_s", 2}},
       {{"gridding", "gridding computes no pair"}, {"tolerance", "gridding computes no pair"}},
       "one sine and one cosine per voxel-sample pair, so the ceiling is the probe's SFU sin/cos rate / 2 pairs/s",
       "flop: `work.flop`, 14 per voxel-sample pair besides the sine and cosine; compulsory bytes: per k-space "
       "sample kx, ky, kz, phi and (F^H d) d read, per voxel x, y, z read and the result written, 4-byte floats. "
       "The roof is the FP32 rate, where the ladder's column holds the rungs to the SFU's sin/cos rate instead; "
       "the gridding rungs (11 on) compute no pair and are not placed"},
      {"mc", "Monte Carlo photon transport (tiny_mc)", "", {}, {}, "",
       "flop: photons x interactions per photon (`work.interactions_per_photon`) x 34.9, the float operations of "
       "one interaction of tiny_mc's walk counted by hand (the RNG's integer work not counted); compulsory bytes: "
       "the tally, one double per shell. The photons start from a handful of scalars and read nothing, so every "
       "rung lies far right of the ridge: mc is compute-bound, whatever the photon count"},
      // A training step's rate depends on the minibatch: one table per batch size.
      {"ae", "Training a convolutional autoencoder on 32x32 colour images (CIFAR-10's shape)", "batch",
       {{"convolution flops", "work.flop", "", "", 1}},
       {},
       "the convolutions' flops of the timed training (`work.flop`: forward and backward, 1.03 GFLOP per image of "
       "the full model) over the kernel time, against the probe's FP32 FMA rate for an fp32 step, and against its "
       "tensor-core rate through mma.sync for a TF32 or BF16 step (n/a where the probe did not measure it)",
       "flop: the convolutions' (`work.flop`); compulsory bytes per training step: the images read, the four hidden "
       "convolutions' outputs written in the forward and read back in the backward pass, the parameters read and "
       "written once, 4 bytes each (for the full model 2.96 MB per image and 6.02 MB per step)"},
      {"epic", "E-field parallel imaging correlator (the MOFF imager of LWA-SV)", "",
       {{"FFT flops", "work.fft_flop", "", "", 1}, {"voltage bytes", "work.voltage_bytes", "", "copy_bytes_per_s", 1},
        {"voltage bytes over PCIe", "work.voltage_bytes", "", "h2d_pinned_bytes_per_s", 1, true}},
       {},
       "three bounds, each over the kernel time: the FFTs' flops (`work.fft_flop`, 5 N log2 N per transform of N "
       "cells) against the probe's FP32 FMA rate, the voltage bytes read (`work.voltage_bytes`) against its "
       "copy bandwidth, and the same bytes against its pinned host-to-device bandwidth (the gulps arrive from the "
       "host; left out where the probe did not measure it). The cell shows the larger fraction, the bound that binds, "
       "and names it; a half-precision step is bound by the half2 rate, which the probe does not measure (n/a)",
       "flop: the FFTs' (`work.fft_flop`; the gridding and the squaring are not counted); compulsory bytes: the "
       "voltages read once (a byte per sample, channel, stand and polarization) and the image written once (a "
       "float per plane, channel and pixel). The gulps' way over PCIe, which the ladder's column also bounds, is "
       "not drawn"},
  };
  return tracks;
}

int rank_in(const std::vector<std::string>& order, const std::string& s) {
  const auto it = std::find(order.begin(), order.end(), s);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return *end == '\0';
}

// Known names in their teaching order, then numbers in numeric order, then text.
bool ordered_before(const std::vector<std::string>& order, const std::string& a, const std::string& b) {
  const int ra = rank_in(order, a), rb = rank_in(order, b);
  if (ra != rb) return ra < rb;
  if (is_number(a) && is_number(b)) return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
  if (is_number(a) != is_number(b)) return is_number(a);
  return a < b;
}

const std::vector<std::string> kVariantOrder = {"fhd", "q"};
const std::vector<std::string> kProblemOrder = {"tiny", "small", "large"};
const std::vector<std::string> kAxisOrder = {"threads", "unroll", "chunk"};

// Rows of one step in several precisions (ae 08's --precision, a peer's modes): the finer first.
const std::vector<std::string> kPrecisionOrder = {"fp64", "fp32", "tf32", "tf32_cl", "bf16", "fp16", "half"};

std::string row_precision(const Record& r) {
  if (auto p = text_at(r.data, "params.precision")) return *p;
  return text_at(r.data, "params.mode").value_or("");
}

bool row_before(const Record* a, const Record* b) {
  const bool na = numbered(a->step()), nb = numbered(b->step());
  if (na != nb) return na;
  if (a->step() != b->step()) return a->step() < b->step();
  const int pa = rank_in(kPrecisionOrder, row_precision(*a)), pb = rank_in(kPrecisionOrder, row_precision(*b));
  if (pa != pb) return pa < pb;
  return a->row_name() < b->row_name();
}

}  // namespace

std::string Track::variant_label(const std::string& value) const {
  if (id == "mri") {
    if (value == "fhd") return "F^H d";
    if (value == "q") return "Q";
  }
  if (!variant_key.empty() && !value.empty()) return variant_key + " " + value;
  return value;
}

Role role_of(const Record& r) {
  if (r.track() == "probe") return Role::probe;
  const std::string tag = r.tag();
  if (tag == "tune") return Role::tune;
  if (tag == "sizes") return Role::sizes;
  if (r.track() == "mri" && (r.step() == "recon" || r.step() == "gridding")) return Role::study;
  // A run on several GPUs is not comparable with the ladder's one-GPU rows; a peer's run under
  // its launcher (DDP, even on one GPU) would replace its single-process row of the same mode.
  if (gpus_of(r) > 1 || (has_ranks(r) && !numbered(r.step()))) return Role::scaling;
  // The gridding steps' runs at another --tolerance than the default 1e-4 (another kernel
  // width, another accuracy): the tolerance table's, not the ladder's, whose rows compare equals.
  if (const auto t = number_at(r.data, "params.tolerance"); t && std::fabs(*t / kLadderTolerance - 1) > 1e-9) return Role::study;
  return Role::ladder;
}

const Track& track_info(const std::string& id) {
  for (const Track& t : known_tracks())
    if (t.id == id) return t;
  static std::map<std::string, Track> generic;
  auto [it, inserted] = generic.emplace(id, Track{id, id, "", {}, {}, "", ""});
  return it->second;
}

std::vector<std::string> track_order(const std::vector<Record>& records) {
  std::set<std::string> present;
  for (const Record& r : records)
    if (r.track() != "probe") present.insert(r.track());
  std::vector<std::string> order;
  for (const Track& t : known_tracks())
    if (present.erase(t.id)) order.push_back(t.id);
  order.insert(order.end(), present.begin(), present.end());
  return order;
}

Probes newest_probes(const std::vector<Record>& records) {
  Probes probes;
  for (const Record& r : records)
    if (r.track() == "probe") {
      auto [it, inserted] = probes.emplace(r.device_name(), &r);
      if (!inserted && r.newer_than(*it->second)) it->second = &r;
    }
  return probes;
}

std::string precision_of(const Record& r) {
  if (auto a = text_at(r.data, "params.accuracy")) return *a;
  return text_at(r.data, "validation.class").value_or("");
}

ArithmeticCeiling arithmetic_ceiling(const std::string& precision) {
  if (precision == "fp32") return {"fp32_flop_per_s", "no FP32 ceiling measured"};
  // tf32_cl: PyTorch's TF32 mode in channels-last layout.
  if (precision.rfind("tf32", 0) == 0) return {"tf32_tensor_flop_per_s", "no tensor-core ceiling measured"};
  if (precision == "bf16") return {"bf16_tensor_flop_per_s", "no tensor-core ceiling measured"};
  if (precision == "half" || precision == "fp16") return {"fp16_flop_per_s", "no half-precision ceiling measured"};
  if (precision == "fp64") return {"fp64_flop_per_s", "no FP64 ceiling measured"};
  return {"", precision.empty() ? "precision not recorded" : "no ceiling for precision " + precision};
}

CeilingFraction ceiling_of(const Track& track, const Record& r, const Probes& probes) {
  if (track.bounds.empty()) return {std::nullopt, "", "n/a"};
  if (!r.gpu()) return {std::nullopt, "", "n/a (CPU)"};
  const auto unbound = track.unbound.find(precision_of(r));
  if (unbound != track.unbound.end()) return {std::nullopt, "", "n/a (" + unbound->second + ")"};
  const auto probe = probes.find(r.device_name());
  if (probe == probes.end()) return {std::nullopt, "", "n/a (no probe on " + r.device_name() + ")"};
  CeilingFraction out;
  // Every bound must be known, but an optional one the probe lacks: the largest fraction binds
  // only among all of them.
  for (const Bound& b : track.bounds) {
    double achieved = 0;  // per second
    if (b.work.empty()) {
      if (r.unit() != b.unit) return {std::nullopt, "", "n/a (unit " + r.unit() + ")"};
      achieved = r.throughput();
    } else {
      const auto work = number_at(r.data, b.work);
      if (!work) return {std::nullopt, "", "n/a (record lacks " + b.work + ")"};
      if (!(r.time_ms() > 0)) return {std::nullopt, "", "n/a (no kernel time)"};
      achieved = *work / (r.time_ms() * 1e-3);
    }
    std::string key = b.ceiling, missing;
    if (key.empty()) {
      const ArithmeticCeiling a = arithmetic_ceiling(precision_of(r));
      if (a.key.empty()) return {std::nullopt, "", "n/a (" + a.missing + ")"};
      key = a.key;
      missing = a.missing;
    }
    const auto ceiling = number_at(probe->second->data, "ceilings." + key);
    if ((!ceiling || *ceiling <= 0) && b.optional) continue;
    if (!ceiling || *ceiling <= 0) return {std::nullopt, "", "n/a (" + (missing.empty() ? "probe lacks " + key : missing) + ")"};
    const double f = achieved / (*ceiling / b.per_unit);
    if (!out.fraction || f > *out.fraction) out = {f, b.name, ""};
  }
  return out;
}

std::optional<double> ceiling_fraction(const Track& track, const Record& r, const Probes& probes) {
  return ceiling_of(track, r, probes).fraction;
}

std::string ceiling_cell(const Track& track, const Record& r, const Probes& probes) {
  const CeilingFraction c = ceiling_of(track, r, probes);
  if (!c.fraction) return c.why_not;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * *c.fraction);
  // Over 100 % the bound does not bind: the step does less of that work than its count says
  // (mri 10 computes one sin/cos per sample and thread and the rest by recurrence; 06's
  // Winograd fewer multiplies than the direct convolution).
  if (*c.fraction > 1) return std::string(buf) + " (over the " + c.bound + " bound: the step does less of that work than counted)";
  return track.bounds.size() > 1 ? std::string(buf) + " (" + c.bound + ")" : std::string(buf);
}

double mri_compulsory_bytes(const std::string& kernel, double samples, double voxels) {
  const double per_sample = kernel == "fhd" ? 7 : kernel == "q" ? 5 : 0;
  if (per_sample == 0) return 0;
  return 4 * (per_sample * samples + 5 * voxels);
}

double mc_compulsory_bytes(double shells) { return 8 * shells; }

const double kMcFlopPerInteraction = 26 + 28 / 3.14159265358979323846;

double epic_compulsory_bytes(double samples, double channels, double stands, double pols, double image_size,
                             double planes) {
  return samples * channels * stands * pols + 4 * planes * channels * image_size * image_size;
}

int epic_planes(const std::string& products) {
  int planes = 0;
  size_t start = 0;
  while (start <= products.size()) {
    const size_t end = std::min(products.find(',', start), products.size());
    std::string p = products.substr(start, end - start);
    p.erase(std::remove(p.begin(), p.end(), ' '), p.end());
    if (p == "XX" || p == "YY" || p == "I") planes += 1;
    else if (p == "XY" || p == "XY*" || p == "YX" || p == "YX*") planes += 2;
    else return 0;
    start = end + 1;
  }
  return planes;
}

double ae_parameters(const AeShape& m) {
  const double in[] = {m.channels, m.enc1, m.enc2, m.dec1, m.dec2}, out[] = {m.enc1, m.enc2, m.dec1, m.dec2, m.channels};
  double p = 0;
  for (int l = 0; l < 5; ++l) p += out[l] * in[l] * 9 + out[l];
  return p;
}

double ae_hidden_activations(const AeShape& m) {
  const double pixels = m.height * m.width;
  // conv1 on the image's grid, conv2 after one pooling, conv3 after two, conv4 after one upsampling
  return m.enc1 * pixels + m.enc2 * pixels / 4 + m.dec1 * pixels / 16 + m.dec2 * pixels / 4;
}

double ae_compulsory_bytes(const AeShape& m, double batch) {
  return 4 * (batch * (m.channels * m.height * m.width + 2 * ae_hidden_activations(m)) + 2 * ae_parameters(m));
}

std::string roofline_precision(const Record& r) {
  if (auto p = text_at(r.data, "params.precision")) return *p;
  const std::string declared = precision_of(r);
  return arithmetic_ceiling(declared).key.empty() ? "fp32" : declared;
}

std::string precision_label(const std::string& precision) {
  if (precision == "fp32") return "FP32";
  if (precision == "fp64") return "FP64";
  if (precision.rfind("tf32", 0) == 0) return "TF32 mma.sync";
  if (precision == "bf16") return "BF16 mma.sync";
  if (precision == "half" || precision == "fp16") return "half2";
  return precision;
}

namespace {

// The rung's flop and compulsory bytes from its record, or why not.
std::string traffic(const Record& r, double& flop, double& bytes) {
  static const json none = json::object();
  const json* problem_params = find_path(r.data, "problem.params");
  const json& p = problem_params ? *problem_params : none;
  auto need = [&](const json& j, const std::string& path, const std::string& where, double& out) {
    const auto v = number_at(j, path);
    if (!v) return "record lacks " + where + path;
    out = *v;
    return std::string();
  };
  std::string missing;
  auto get = [&](const json& j, const std::string& path, const std::string& where) {
    double v = 0;
    if (missing.empty()) missing = need(j, path, where, v);
    return v;
  };
  const std::string track = r.track();
  if (track == "mri") {
    flop = get(r.data, "work.flop", "");
    const double samples = get(p, "samples", "problem.params."), voxels = get(p, "voxels", "problem.params.");
    if (!missing.empty()) return missing;
    bytes = mri_compulsory_bytes(text_at(r.data, "params.kernel").value_or(""), samples, voxels);
    return bytes > 0 ? "" : "kernel neither fhd nor q";
  }
  if (track == "mc") {
    const double photons = get(r.data, "work.count", ""), per_photon = get(r.data, "work.interactions_per_photon", "");
    const double shells = get(p, "shells", "problem.params.");
    if (!missing.empty()) return missing;
    flop = photons * per_photon * kMcFlopPerInteraction;
    bytes = mc_compulsory_bytes(shells);
    return "";
  }
  if (track == "epic") {
    flop = get(r.data, "work.fft_flop", "");
    const double samples = get(p, "samples_per_gulp", "problem.params.") * get(p, "gulps", "problem.params.");
    const double channels = get(p, "channels", "problem.params."), stands = get(p, "stands", "problem.params.");
    const double pols = get(p, "pols", "problem.params."), n = get(p, "image_size", "problem.params.");
    if (!missing.empty()) return missing;
    const int planes = epic_planes(text_at(p, "products").value_or(""));
    if (planes == 0) return "unknown products " + text_at(p, "products").value_or("(none)");
    bytes = epic_compulsory_bytes(samples, channels, stands, pols, n, planes);
    return "";
  }
  if (track == "ae") {
    flop = get(r.data, "work.flop", "");
    const double steps = get(r.data, "work.steps", ""), batch = get(r.data, "params.batch", "");
    AeShape m;
    m.channels = get(p, "model.channels", "problem.params.");
    m.height = get(p, "model.height", "problem.params.");
    m.width = get(p, "model.width", "problem.params.");
    const json* widths = find_path(p, "model.widths");
    if (!missing.empty()) return missing;
    if (!widths || !widths->is_array() || widths->size() != 4) return "record lacks problem.params.model.widths";
    for (const json& w : *widths)
      if (!w.is_number()) return "record lacks problem.params.model.widths";
    m.enc1 = (*widths)[0].get<double>(), m.enc2 = (*widths)[1].get<double>();
    m.dec1 = (*widths)[2].get<double>(), m.dec2 = (*widths)[3].get<double>();
    bytes = steps * ae_compulsory_bytes(m, batch);
    return "";
  }
  return "no roofline for track " + track;
}

}  // namespace

RooflinePoint roofline_point(const Track& track, const Record& r, const Probes& probes) {
  RooflinePoint pt;
  pt.precision = roofline_precision(r);
  auto not_placed = [&](const std::string& why) {
    pt.why_not = why;
    return pt;
  };
  if (!r.gpu()) return not_placed("CPU");
  const auto unbound = track.unbound.find(precision_of(r));
  if (unbound != track.unbound.end()) return not_placed(unbound->second);
  const auto probe = probes.find(r.device_name());
  if (probe == probes.end()) return not_placed("no probe on " + r.device_name());
  if (const std::string why = traffic(r, pt.flop, pt.bytes); !why.empty()) return not_placed(why);
  pt.seconds = r.time_ms() * 1e-3;
  if (!(pt.seconds > 0) || !(pt.flop > 0) || !(pt.bytes > 0)) return not_placed("no kernel time, flop or bytes");
  const ArithmeticCeiling a = arithmetic_ceiling(pt.precision);
  const auto compute = number_at(probe->second->data, "ceilings." + a.key);
  const auto bandwidth = number_at(probe->second->data, "ceilings.copy_bytes_per_s");
  if (a.key.empty() || !compute || *compute <= 0) return not_placed(a.missing);
  if (!bandwidth || *bandwidth <= 0) return not_placed("probe lacks copy_bytes_per_s");
  pt.compute = *compute;
  pt.bandwidth = *bandwidth;
  return pt;
}

std::string variant_of(const Track& track, const Record& r) {
  if (!track.variant_key.empty())
    if (auto v = text_at(r.data, "params." + track.variant_key)) return *v;
  return "";
}

std::string Ladder::machine_of(const Record& r) const {
  const auto it = guests.find(&r);
  return it == guests.end() ? "" : it->second;
}

std::string Ladder::label(const Record& r) const {
  const std::string machine = machine_of(r);
  return r.row_name() + (machine.empty() ? "" : " on " + machine);
}

std::vector<Ladder> ladders(const std::vector<Record>& records, const std::string& track) {
  const Track& info = track_info(track);
  // (variant, problem) -> the records of that table family
  std::map<std::pair<std::string, std::string>, std::vector<const Record*>> families;
  for (const Record& r : records)
    if (r.track() == track && role_of(r) == Role::ladder) families[{variant_of(info, r), r.problem()}].push_back(&r);

  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& f : families) keys.push_back(f.first);
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return ordered_before(kVariantOrder, a.first, b.first);
    return ordered_before(kProblemOrder, a.second, b.second);
  });

  std::vector<Ladder> out;
  for (const auto& key : keys) {
    const auto& family = families[key];
    std::set<std::string> gpus, gpu_files;  // the GPUs, and the files of their hosts
    for (const Record* r : family)
      if (r->gpu()) gpus.insert(r->device_name()), gpu_files.insert(r->file);
    // CPU rows appear in every GPU's table: the ladder starts from the CPU baseline.
    std::vector<std::string> devices(gpus.begin(), gpus.end());
    if (devices.empty()) devices.push_back("");
    for (const std::string& device : devices) {
      // A CPU row carries no GPU name; the one measured on this GPU's host is the one in the same
      // results file (mri-h100.jsonl holds the H100 host's CPU rows). Rows of other GPU hosts'
      // files join only where that file has none.
      std::set<std::string> files;
      for (const Record* r : family)
        if (r->gpu() && r->device_name() == device) files.insert(r->file);
      bool local_cpu = false;
      for (const Record* r : family)
        if (!r->gpu() && files.count(r->file)) local_cpu = true;
      std::map<std::string, const Record*> newest;
      // A file without any GPU row of this problem is a CPU-only machine's: its rows are no GPU
      // host's baseline, and the rule above would drop them from every GPU table (every GPU
      // host's file holds CPU rows of its own). They are rows of their own, by machine.
      std::map<std::pair<std::string, std::string>, const Record*> guests;  // (machine, row) -> newest
      for (const Record* r : family) {
        if (r->gpu()) {
          if (r->device_name() == device) keep_newest(newest, r->row_name(), *r);
        } else if (!device.empty() && !gpu_files.count(r->file)) {
          keep_newest(guests, {r->where(), r->row_name()}, *r);
        } else if (!local_cpu || files.count(r->file)) {
          keep_newest(newest, r->row_name(), *r);
        }
      }
      Ladder l{track, key.first, key.second, device, {}, {}};
      for (const auto& n : newest) l.rows.push_back(n.second);
      for (const auto& [g, r] : guests) l.rows.push_back(r), l.guests[r] = g.first;
      // Another machine's row follows the table's own row of its step, machines by name.
      std::sort(l.rows.begin(), l.rows.end(), [&l](const Record* a, const Record* b) {
        if (row_before(a, b)) return true;
        if (row_before(b, a)) return false;
        const std::string ma = l.machine_of(*a), mb = l.machine_of(*b);
        return ma.empty() != mb.empty() ? ma.empty() : ma < mb;
      });
      out.push_back(std::move(l));
    }
  }
  return out;
}

namespace {

// Whether `candidate` takes one value for each combination of the `kept` axes' values.
bool determined_by(const std::vector<const Record*>& points, const std::vector<std::string>& kept,
                   const std::string& candidate) {
  std::map<std::string, std::set<double>> values;
  for (const Record* r : points) {
    std::string key;
    for (const std::string& a : kept) key += text_at(r->data, "params." + a).value_or("-") + "/";
    if (auto v = number_at(r->data, "params." + candidate)) values[key].insert(*v);
  }
  for (const auto& v : values)
    if (v.second.size() > 1) return false;
  return true;
}

}  // namespace

std::vector<TuneSweep> tune_sweeps(const std::vector<Record>& records, const std::string& track,
                                   const Grids& grids) {
  const Track& info = track_info(track);
  std::map<std::vector<std::string>, std::vector<const Record*>> groups;
  for (const Record& r : records)
    if (r.track() == track && role_of(r) == Role::tune)
      groups[{r.step(), variant_of(info, r), r.problem(), r.where(), r.commit()}].push_back(&r);

  std::vector<TuneSweep> out;
  for (const auto& [key, group] : groups) {
    std::map<std::string, std::set<double>> values;
    for (const Record* r : group)
      if (r->data.contains("params"))
        for (const auto& p : r->data["params"].items())
          if (p.value().is_number()) values[p.key()].insert(p.value().get<double>());
    TuneSweep s{track, key[0], key[1], key[2], key[3], key[4], {}, {}, ""};
    const auto grid = grids.find(track + "/" + s.step);
    auto in_grid = [&](const std::string& name) {
      return grid != grids.end() && std::count(grid->second.begin(), grid->second.end(), name) > 0;
    };
    std::vector<std::string> candidates;
    for (const auto& [name, set] : values)
      if (set.size() > 1) candidates.push_back(name);
    std::sort(candidates.begin(), candidates.end(), [&](const std::string& a, const std::string& b) {
      if (in_grid(a) != in_grid(b)) return in_grid(a);
      return ordered_before(kAxisOrder, a, b);
    });
    for (const std::string& c : candidates)
      if (s.axes.empty() || !determined_by(group, s.axes, c)) s.axes.push_back(c);
    std::map<std::string, const Record*> newest;
    for (const Record* r : group) {
      std::string combination;
      for (const std::string& a : s.axes) combination += text_at(r->data, "params." + a).value_or("-") + "/";
      keep_newest(newest, combination, *r);
    }
    for (const auto& n : newest) s.points.push_back(n.second);
    std::sort(s.points.begin(), s.points.end(), [](const Record* a, const Record* b) { return a->order < b->order; });
    out.push_back(std::move(s));
  }
  auto newest = [](const TuneSweep& s) {
    const Record* n = s.points.front();
    for (const Record* r : s.points)
      if (r->newer_than(*n)) n = r;
    return n;
  };
  std::stable_sort(out.begin(), out.end(), [&](const TuneSweep& a, const TuneSweep& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.variant != b.variant) return ordered_before(kVariantOrder, a.variant, b.variant);
    if (a.problem != b.problem) return ordered_before(kProblemOrder, a.problem, b.problem);
    if (a.where != b.where) return a.where < b.where;
    return newest(a)->newer_than(*newest(b));
  });
  // Sorted newest first within a step, variant, problem and machine: the first is current.
  for (size_t i = 1; i < out.size(); ++i) {
    const TuneSweep& prev = out[i - 1];
    TuneSweep& s = out[i];
    if (s.step == prev.step && s.variant == prev.variant && s.problem == prev.problem && s.where == prev.where)
      s.superseded_by = prev.superseded_by.empty() ? prev.commit : prev.superseded_by;
  }
  return out;
}

std::vector<SizeSweep> size_sweeps(const std::vector<Record>& records, const std::string& track) {
  const Track& info = track_info(track);
  // variant -> (step, where) -> count -> newest
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::map<double, const Record*>>> groups;
  for (const Record& r : records) {
    if (r.track() != track || role_of(r) != Role::sizes) continue;
    auto& points = groups[variant_of(info, r)][{r.step(), r.where()}];
    const double count = *number_at(r.data, "work.count");
    auto [it, inserted] = points.emplace(count, &r);
    if (!inserted && r.newer_than(*it->second)) it->second = &r;
  }
  std::vector<std::string> variants;
  for (const auto& g : groups) variants.push_back(g.first);
  std::sort(variants.begin(), variants.end(),
            [](const std::string& a, const std::string& b) { return ordered_before(kVariantOrder, a, b); });
  std::vector<SizeSweep> out;
  for (const std::string& v : variants) {
    SizeSweep s{track, v, {}};
    std::map<std::string, int> places;  // a step measured on several machines names the machine
    for (const auto& [key, points] : groups[v]) ++places[key.first];
    for (const auto& [key, points] : groups[v])
      s.series[places[key.first] > 1 ? key.first + " on " + key.second : key.first] = points;
    out.push_back(std::move(s));
  }
  return out;
}

int gpus_of(const Record& r) {
  const auto n = number_at(r.data, "ranks.size");  // a positive integer: records.cpp, check_for_report
  return n ? int(*n) : 1;
}

bool has_ranks(const Record& r) { return r.data.contains("ranks"); }

std::vector<ScalingTable> scaling_tables(const std::vector<Record>& records, const std::string& track,
                                         const Parents& parents) {
  const Track& info = track_info(track);
  struct Key {
    std::string variant, problem, device;
    bool operator<(const Key& o) const {
      if (device != o.device) return device < o.device;
      if (variant != o.variant) return ordered_before(kVariantOrder, variant, o.variant);
      if (problem != o.problem) return ordered_before(kProblemOrder, problem, o.problem);
      return false;
    }
  };
  // (variant, problem, GPU) -> row -> GPUs -> newest record with `ranks`; and the runs without.
  std::map<Key, std::map<std::string, std::map<int, const Record*>>> ranked;
  std::map<Key, std::map<std::string, const Record*>> plain;
  for (const Record& r : records) {
    if (r.track() != track || !r.gpu()) continue;
    const Role role = role_of(r);
    if (role != Role::ladder && role != Role::scaling) continue;
    const Key key{variant_of(info, r), r.problem(), r.device_name()};
    if (has_ranks(r)) {
      keep_newest(ranked[key][r.row_name()], gpus_of(r), r);
    } else {
      keep_newest(plain[key], r.row_name(), r);
    }
  }
  std::vector<ScalingTable> out;
  std::vector<Ladder> all_ladders;  // for the parents' rows, built once where needed
  for (const auto& [key, rows] : ranked) {
    ScalingTable t{track, key.variant, key.problem, key.device, {}};
    for (const auto& [row, points] : rows) {
      if (points.rbegin()->first < 2) continue;  // ran on one GPU only: nothing scaled yet
      ScalingSeries s{row, points, false, nullptr};
      if (!s.points.count(1)) {
        const auto single = plain[key].find(row);
        if (single != plain[key].end()) s.points[1] = single->second, s.single_without_ranks = true;
      }
      const Record& any = *points.begin()->second;
      const auto declared = parents.find(track + "/" + any.step());
      if (numbered(any.step()) && declared != parents.end() && !declared->second.id.empty()) {
        if (all_ladders.empty()) all_ladders = ladders(records, track);
        for (const Ladder& l : all_ladders)
          if (l.variant == key.variant && l.problem == key.problem && l.device == key.device)
            for (const Record* p : l.rows)
              if (p->step() == declared->second.id && l.machine_of(*p).empty()) {
                s.parent = p;  // its first row: the finest precision, as the ladder's step speedup takes
                break;
              }
      }
      t.series.push_back(std::move(s));
    }
    if (t.series.empty()) continue;
    std::stable_sort(t.series.begin(), t.series.end(), [](const ScalingSeries& a, const ScalingSeries& b) {
      return row_before(a.points.rbegin()->second, b.points.rbegin()->second);
    });
    out.push_back(std::move(t));
  }
  return out;
}

bool numbered(const std::string& step) {
  return step.size() >= 2 && std::isdigit(static_cast<unsigned char>(step[0])) &&
         std::isdigit(static_cast<unsigned char>(step[1]));
}

std::string short_step(const std::string& step) { return numbered(step) ? step.substr(0, 2) : step; }

}  // namespace report
