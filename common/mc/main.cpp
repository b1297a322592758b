// The MC harness: main() for every MC step program. A step supplies only its algorithm
// (step.hpp); this file parses the flags, sets up the problem, times the step, validates
// its tally against the exact transport solution, and writes the output and the record.
#include <cmath>
#include <cstdio>

#include "cli.hpp"
#include "device.hpp"
#include "error.hpp"
#include "exact.hpp"
#include "npy.hpp"
#include "nvtx.hpp"
#include "problem.hpp"
#include "results.hpp"
#include "step.hpp"
#include "validation.hpp"

namespace mc {
namespace {

struct Options {
  core::CoreOptions core;
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
  app.add_option("--roulette-survival", p.roulette_survival, "Roulette survival probability")->check(CLI::Range(1e-3, 1.0))->capture_default_str();
}

Problem make_problem(const Options& o, bool gpu, const std::string& program) {
  if (!o.core.input.empty())
    throw core::UsageError("--input " + o.core.input + ": the MC problem has no input files; it is set by --size/--photons and the medium flags");
  Problem p = o.physics;
  p.seed = o.core.seed;
  if (o.photons) {
    p.photons = o.photons;
    p.name = "custom";
  } else {
    if (o.core.size == "large" && !gpu)
      throw core::UsageError("--size large is the GPU scale (2^30 photons); " + program +
                             " would take hours on a CPU. Use --size small, or --photons N to insist.");
    p.photons = photons_of_size(o.core.size);
    p.name = o.core.size;
  }
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

int run(int argc, char** argv) {
  const StepInfo info = step_info();
  const std::string program = "mc_" + info.id;
  CLI::App app{"stepwise mc " + info.id + ": " + info.title, program};
  Options o;
  core::add_core_options(app, o.core);
  add_problem_options(app, o);
  core::Tunables tunables = info.tunables;
  core::add_tunables(app, tunables);
  RealTunables reals = info.reals;
  for (RealTunable& r : reals)
    app.add_option("--" + r.name, r.value, r.help)->check(CLI::Range(r.min, r.max))->capture_default_str();
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;

  core::DeviceInfo device;
  if (info.gpu) device = core::require_gpu(o.core.device);
  const Problem p = make_problem(o, info.gpu, program);

  Tally tally;
  std::unique_ptr<Step> step = make_step(tunables, reals);
  const core::Phases phases{
      [&] { core::NvtxRange r("load"); step->load(p); },
      [&] { core::NvtxRange r("compute"); step->compute(); },
      [&] { core::NvtxRange r("store"); step->store(tally); }};
  auto timer = info.gpu ? core::make_device_timer() : core::make_host_timer();
  const core::TimedRuns t = core::time_runs(phases, *timer, o.core.warmup, o.core.repeat, !o.core.quiet);
  const double photons_per_ms = double(p.photons) / t.kernel_ms.median;

  const bool validate_now = o.core.check || !o.core.json_path.empty() || !o.core.out.empty();
  Verdict v;
  if (validate_now) {
    core::NvtxRange r("reference");
    v = validate(p, tally);
  }

  if (!o.core.out.empty()) {
    // float64 [shells, 3]: heat, its standard error, the exact heat. Rows 0 .. shells-2 are
    // W/cm^3 per launched W; the last row is the fraction absorbed beyond the inner shells.
    const std::vector<double> heat = heat_density(p, v.stats.mean.empty() ? std::vector<double>(p.shells, NAN) : v.stats.mean);
    const std::vector<double> exact = heat_density(p, v.exact);
    std::vector<double> se(v.stats.stderr_of_mean);
    se.resize(p.shells, NAN);
    for (int i = 0; i + 1 < p.shells; ++i) se[i] /= p.shell_volume_cm3(i);
    std::vector<double> out;
    for (int i = 0; i < p.shells; ++i) out.insert(out.end(), {heat[i], se[i], exact[i]});
    core::write_npy(o.core.out, {size_t(p.shells), size_t(3)}, out.data());
  }

  if (!o.core.json_path.empty()) {
    core::json params = core::json::object();
    for (const auto& tu : tunables) params[tu.name] = tu.value;
    for (const auto& r : reals) params[r.name] = r.value;
    step->describe(params);
    core::json r = core::step_record("mc", info.id, info.title, info.gpu,
                                     {{"name", p.name}, {"params", p.params()}, {"digest", p.digest()}},
                                     params, device, t, o.core);
    r["work"] = {{"unit", "photons"}, {"count", p.photons},
                 {"interactions_per_photon", expected_interactions(p)}};
    r["throughput"] = {{"value", photons_per_ms}, {"unit", "photons/ms"}};
    r["validation"] = validation_record(p, v);
    r["profile"] = profile_record(p, v);
    core::append_record(o.core.json_path, r);
  }

  if (!o.core.quiet) {
    printf("%s  %s  problem=%s (%llu photons)%s%s\n", program.c_str(), info.title.c_str(), p.name.c_str(),
           static_cast<unsigned long long>(p.photons), info.gpu ? "  device=" : "", device.name.c_str());
    printf("  time    kernel %.4g ms (min %.4g, max %.4g), end-to-end %.4g ms, %d runs\n",
           t.kernel_ms.median, t.kernel_ms.min, t.kernel_ms.max, t.total_ms.median, t.repeat);
    printf("  rate    %.4g photons/ms\n", photons_per_ms);
    if (validate_now) {
      const int mm1 = std::lround(1000.0 / p.microns_per_shell) < p.shells - 1 ? int(std::lround(1000.0 / p.microns_per_shell)) : 0;
      printf("  heat    shell at %.3f mm: %.5g +- %.2g W/cm^3 (exact %.5g); beyond %.3g mm: %.5f +- %.5f (exact %.5f)\n",
             mm1 * p.microns_per_shell * 1e-3, v.stats.mean.empty() ? NAN : v.stats.mean[mm1] / p.shell_volume_cm3(mm1),
             v.stats.stderr_of_mean.empty() ? NAN : v.stats.stderr_of_mean[mm1] / p.shell_volume_cm3(mm1),
             v.exact[mm1] / p.shell_volume_cm3(mm1), (p.shells - 1) * p.microns_per_shell * 1e-3,
             v.beyond.value, v.beyond.stderr, v.exact.back());
      if (v.chi2.defined)
        printf("  check   %s vs exact transport: T^2 %.1f on %g shells, %zu batches, p-value %.3g (limit %g); "
               "energy %.6f +- %.6f (z %.2f); beyond z %.2f (limit %g)\n",
               v.pass ? "PASS" : "FAIL", v.chi2.t2, v.chi2.dof1, v.stats.batches, v.chi2.p_value, kPValueThreshold,
               v.energy.value, v.energy.stderr, v.energy_z, v.beyond_z, kZLimit);
      else
        printf("  check   %s: no chi-square (%s)\n", v.pass ? "PASS" : "FAIL", v.chi2.why.c_str());
    }
  }
  if (o.core.check && !v.pass) {
    fprintf(stderr, "%s: validation FAILED: %s\n", program.c_str(), v.failure.c_str());
    return core::kValidationFailed;
  }
  return core::kOk;
}

}  // namespace
}  // namespace mc

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return mc::run(argc, argv); });
}
