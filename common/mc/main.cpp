// The MC harness: main() of every MC step program, on the shared loop (core/harness.hpp).
// What is MC's own: the medium and photon-count flags, the problem, validation of the tally
// against the exact transport solution, the heat profile as output and in the record.
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "mc/exact.hpp"
#include "core/harness.hpp"
#include "core/npy.hpp"
#include "core/nvtx.hpp"
#include "mc/problem.hpp"
#include "mc/step.hpp"
#include "mc/validation.hpp"

namespace mc {
namespace {

struct Options {
  uint64_t photons = 0;  // 0: from --size
  Problem physics;       // the medium and the tallies; photons, seed and name are filled later
};

void add_problem_options(CLI::App& app, Options& o) {
  app.add_option("--photons", o.photons, "Photons to simulate (overrides --size), 2^14 .. 2^34")
      ->check(CLI::Range(kMinPhotons, kMaxPhotons));
  Problem& p = o.physics;
  app.add_option("--mu-a", p.mu_a, "Absorption coefficient (1/cm)")->check(CLI::Range(1e-3, 1e4))->capture_default_str();
  app.add_option("--mu-s", p.mu_s, "Scattering coefficient (1/cm)")->check(CLI::Range(0.0, 1e5))->capture_default_str();
  app.add_option("--shells", p.shells, "Shells (the last collects everything beyond)")->check(CLI::Range(2, 1000))->capture_default_str();
  app.add_option("--microns-per-shell", p.microns_per_shell, "Shell thickness (um)")->check(CLI::Range(1e-2, 1e5))->capture_default_str();
  app.add_option("--weight-threshold", p.weight_threshold, "Roulette below this photon weight")->check(CLI::Range(1e-6, 0.5))->capture_default_str();
  // Below 1: at 1 the roulette never ends a photon. A photon plays 1 / (1 - survival) rounds
  // on average, at most 100 here.
  app.add_option("--roulette-survival", p.roulette_survival, "Roulette survival probability")->check(CLI::Range(1e-3, 0.99))->capture_default_str();
}

// Limits that keep every accepted medium finite in time, with the reason in the message.
constexpr double kMinAbsorbedFraction = 1e-3;  // mu_a / mu_t: ~7,000 interactions per photon at most
constexpr double kMaxOuterRadiusMfp = 200;     // the exact solution's cost grows with shells x radius

std::string num(double x) {
  char text[32];
  snprintf(text, sizeof text, "%g", x);
  return text;
}

void check_terminates(const Problem& p) {
  // A photon loses the fraction mu_a / mu_t of its weight per interaction. When that rounds
  // away in float (albedo 1.0f) the weight never reaches the roulette and the photon never ends.
  if (p.mu_a / p.mu_t() < kMinAbsorbedFraction)
    throw core::UsageError("--mu-a " + num(p.mu_a) + " with --mu-s " + num(p.mu_s) +
                           ": absorbs " + num(p.mu_a / p.mu_t()) + " of the weight per interaction; at least " +
                           num(kMinAbsorbedFraction) + " is needed for photons to end in bounded time");
  // Beyond ~200 mean free paths nothing is left to tally (the heat falls off exponentially),
  // while validation's exact solution costs time in proportion to shells x radius.
  const double outer_mfp = (p.shells - 1) * p.shell_cm() * p.mu_t();
  if (outer_mfp > kMaxOuterRadiusMfp)
    throw core::UsageError("--shells " + std::to_string(p.shells) + " x --microns-per-shell " + num(p.microns_per_shell) +
                           ": the shells reach " + num(outer_mfp) + " mean free paths; at most " +
                           num(kMaxOuterRadiusMfp) + " are tallied (no heat is left that far out)");
}

Problem make_problem(const Options& o, const core::CoreOptions& core, bool gpu, const std::string& program) {
  if (!core.input.empty())
    throw core::UsageError("--input " + core.input + ": the MC problem has no input files; it is set by --size/--photons and the medium flags");
  Problem p = o.physics;
  p.seed = core.seed;
  if (o.photons) {
    p.photons = o.photons;
    p.name = "custom";
  } else {
    if (core.size == "large" && !gpu)
      throw core::UsageError("--size large is the GPU scale (2^30 photons); " + program +
                             " would take hours on a CPU. Use --size small, or --photons N to insist.");
    p.photons = photons_of_size(core.size);
    p.name = core.size;
  }
  check_terminates(p);
  return p;
}

// Heat density (W/cm^3 per W launched) of the inner shells; the last entry is the fraction
// of the launched weight absorbed beyond them (tiny_mc's "extra").
std::vector<double> heat_density(const Problem& p, const std::vector<double>& fraction) {
  std::vector<double> h(fraction);
  for (int i = 0; i + 1 < p.shells; ++i) h[i] /= p.shell_volume_cm3(i);
  return h;
}

core::json validation_record(const Problem& p, const Verdict& v) {
  core::json j = core::validation_json("exact-transport", v.metrics, v.pass);
  auto num = [](double x) { return std::isfinite(x) ? core::json(x) : core::json(nullptr); };
  j["class"] = "statistical";
  j["batches"] = v.stats.batches;
  j["pooled_batches"] = v.pooled_batches;
  j["bins"] = v.bins.size();
  j["chi2"] = {{"statistic", "hotelling_t2"}, {"value", num(v.chi2.t2)}, {"dof", {v.chi2.dof1, v.chi2.dof2}},
               {"p_value", num(v.chi2.p_value)}, {"threshold", kPValueThreshold}, {"defined", v.chi2.defined}};
  j["energy"] = {{"value", num(v.energy.value)}, {"stderr", num(v.energy.stderr)}, {"z", num(v.energy_z)}};
  j["beyond"] = {{"value", num(v.beyond.value)}, {"stderr", num(v.beyond.stderr)},
                 {"exact", v.exact.back()}, {"z", num(v.beyond_z)}, {"r_mm", (p.shells - 1) * p.microns_per_shell * 1e-3}};
  j["z_limit"] = kZLimit;
  j["max_shell_z"] = num(v.max_shell_z);
  if (!v.pass) j["failure"] = v.failure;
  return j;
}

core::json profile_record(const Problem& p, const Verdict& v) {
  core::json r_mm = core::json::array(), heat = core::json::array(), err = core::json::array(),
             exact = core::json::array();
  for (int i = 0; i + 1 < p.shells; ++i) {
    const double vol = p.shell_volume_cm3(i);
    r_mm.push_back((i + 0.5) * p.microns_per_shell * 1e-3);
    heat.push_back(v.stats.mean.empty() ? 0.0 : v.stats.mean[i] / vol);
    err.push_back(v.stats.stderr_of_mean.empty() ? 0.0 : v.stats.stderr_of_mean[i] / vol);
    exact.push_back(v.exact[i] / vol);
  }
  return {{"r_mm", r_mm}, {"heat", heat}, {"stderr", err}, {"exact", exact}, {"unit", "W/cm^3"}};
}

class McTrack final : public core::Track {
 public:
  void add_options(CLI::App& app) override { add_problem_options(app, o_); }

  void prepare(const core::CoreOptions& core, const core::Tunables& tunables, bool gpu, const std::string& program) override {
    p_ = make_problem(o_, core, gpu, program);
    step_ = make_step(tunables);
  }

  core::Phases phases() override {
    return {[this] { core::NvtxRange r("load"); step_->load(p_); },
            [this] { core::NvtxRange r("compute"); step_->compute(); },
            [this] { core::NvtxRange r("store"); step_->store(tally_); }};
  }

  std::string describe() const override {
    return "problem=" + p_.name + " (" + std::to_string(p_.photons) + " photons)";
  }

  core::json problem_json() const override { return {{"name", p_.name}, {"params", p_.params()}, {"digest", p_.digest()}}; }

  void describe_params(core::json& params) const override {
    core::Fields fields(params);
    step_->describe(fields);
  }

  core::Rate rate(double kernel_ms) const override {
    return {{{"unit", "photons"}, {"count", p_.photons}, {"interactions_per_photon", expected_interactions(p_)}},
            double(p_.photons) / kernel_ms, "photons/ms"};
  }

  core::Verdict validate(const core::CoreOptions&) override {
    v_ = mc::validate(p_, tally_);
    core::Verdict out;
    out.pass = v_.pass;
    out.record = validation_record(p_, v_);
    out.failure = v_.failure;
    out.summary = summary(p_, v_);
    return out;
  }

  void write_output(const std::string& path, const core::Verdict&) override {
    // float64 [shells, 3]: heat, its standard error, the exact heat. Rows 0 .. shells-2 are
    // W/cm^3 per launched W; the last row is the fraction absorbed beyond the inner shells.
    const Problem& p = p_;
    const std::vector<double> heat = heat_density(p, v_.stats.mean.empty() ? std::vector<double>(p.shells, NAN) : v_.stats.mean);
    const std::vector<double> exact = heat_density(p, v_.exact);
    std::vector<double> se(v_.stats.stderr_of_mean);
    se.resize(p.shells, NAN);
    for (int i = 0; i + 1 < p.shells; ++i) se[i] /= p.shell_volume_cm3(i);
    std::vector<double> out;
    for (int i = 0; i < p.shells; ++i) out.insert(out.end(), {heat[i], se[i], exact[i]});
    core::write_npy(path, {size_t(p.shells), size_t(3)}, out.data());
  }

  void extend_record(core::json& record, const core::Verdict&) const override { record["profile"] = profile_record(p_, v_); }

 private:
  static std::string summary(const Problem& p, const Verdict& v) {
    char text[1024];
    const int mm1 = std::lround(1000.0 / p.microns_per_shell) < p.shells - 1 ? int(std::lround(1000.0 / p.microns_per_shell)) : 0;
    int n = snprintf(text, sizeof text, "  heat    shell at %.3f mm: %.5g +- %.2g W/cm^3 (exact %.5g); beyond %.3g mm: %.5f +- %.5f (exact %.5f)\n",
                     mm1 * p.microns_per_shell * 1e-3, v.stats.mean.empty() ? NAN : v.stats.mean[mm1] / p.shell_volume_cm3(mm1),
                     v.stats.stderr_of_mean.empty() ? NAN : v.stats.stderr_of_mean[mm1] / p.shell_volume_cm3(mm1),
                     v.exact[mm1] / p.shell_volume_cm3(mm1), (p.shells - 1) * p.microns_per_shell * 1e-3,
                     v.beyond.value, v.beyond.stderr, v.exact.back());
    if (v.chi2.defined)
      snprintf(text + n, sizeof text - n,
               "  check   %s vs exact transport: T^2 %.1f on %g bins of shells, %zu batches, p-value %.3g (limit %g); "
               "energy %.6f +- %.6f (z %.2f); beyond z %.2f (limit %g)\n",
               v.pass ? "PASS" : "FAIL", v.chi2.t2, v.chi2.dof1, v.pooled_batches, v.chi2.p_value, kPValueThreshold,
               v.energy.value, v.energy.stderr, v.energy_z, v.beyond_z, kZLimit);
    else
      snprintf(text + n, sizeof text - n, "  check   %s: no chi-square (%s)\n", v.pass ? "PASS" : "FAIL", v.chi2.why.c_str());
    return text;
  }

  Options o_;
  Problem p_;
  Tally tally_;
  Verdict v_;
  std::unique_ptr<Step> step_;
};

}  // namespace
}  // namespace mc

int main(int argc, char** argv) {
  const mc::StepInfo info = mc::step_info();
  mc::McTrack track;
  return core::run_step_program(track, {"mc", info.id, info.title, info.gpu, info.tunables, {}, info.multi_gpu}, argc, argv);
}
