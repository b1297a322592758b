// mri_gridding_accuracy: gridding's F^H d against the direct sum (the CPU double reference)
// for every kernel width and oversampling asked for (Kaiser-Bessel), or every tolerance and
// oversampling (the exponential-of-semicircle kernel, --kernel es), one table row and one
// results record each.
#include <chrono>
#include <cstdio>
#include <numeric>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "gridding.hpp"
#include "core/metrics.hpp"
#include "mri/problem.hpp"
#include "recon.hpp"
#include "core/results.hpp"

namespace {

int run(int argc, char** argv) {
  std::string size = "small", json_path;
  uint64_t seed = 1;
  std::vector<int> widths{2, 3, 4, 5, 6, 7, 8};
  std::vector<double> sigmas{1.25, 1.5, 2.0};
  std::vector<double> tolerances{1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
  std::string kernel = "kb";
  size_t samples = 0;
  CLI::App app{"mri_gridding_accuracy: gridding F^H d against the direct sum, by kernel width and oversampling",
               "mri_gridding_accuracy"};
  app.add_option("--size", size, "Problem: tiny or small")->check(CLI::IsMember({"tiny", "small"}))->capture_default_str();
  app.add_option("--seed", seed, "Seed of the trajectory")->capture_default_str();
  app.add_option("--widths", widths, "Kernel widths W")->check(CLI::Range(2, 16))->capture_default_str();
  app.add_option("--oversampling", sigmas, "Oversampling factors sigma")->check(core::FiniteRange(1.25, 4))->capture_default_str();
  app.add_option("--kernel", kernel, "kb: Kaiser-Bessel by width; es: exponential of semicircle by tolerance")
      ->check(CLI::IsMember({"kb", "es"}))->capture_default_str();
  app.add_option("--tolerances", tolerances, "Tolerances of the es kernel")->check(core::FiniteRange(1e-7, 1e-2))
      ->capture_default_str();
  app.add_option("--samples", samples, "Keep only the first N samples (a partial trajectory, as the steps' uneven-sizes test)")
      ->check(CLI::Range(size_t(1), size_t(1) << 30));
  app.add_option("--json", json_path, "Append one results record per point to this file");
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;
  if (!json_path.empty()) core::check_output_path("--json", json_path);

  const mri::Problem p = mri::generate(size, seed, 0.0, samples);
  auto t0 = std::chrono::steady_clock::now();
  const mri::cvec direct = mri::sum_step("cpu-double", "--fhd-step")(p, mri::Kernel::fhd);
  const double direct_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  printf("problem %s: %zu samples x %zu voxels; direct F^H d (cpu-double) %.0f ms\n\n", p.name.c_str(), p.samples(),
         p.voxels(), direct_ms);
  const bool es = kernel == "es";
  printf("| kernel | tolerance | W | sigma | grid | rel_l2 | max_abs / max | bound | time (ms) |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  double peak = 0;
  for (const auto& v : direct) peak = std::max(peak, std::abs(v));
  // The points: (W, sigma) for Kaiser-Bessel, (tolerance, sigma) for es.
  std::vector<mri::GriddingParams> points;
  for (double s : sigmas)
    if (es)
      for (double t : tolerances) points.push_back({0, s, t});
    else
      for (int w : widths) points.push_back({w, s, 0});
  for (mri::GriddingParams g : points) {
    const double s = g.oversampling;
    double bound;
    try {
      // Kaiser-Bessel: the aliasing bound of its transform; es: the tolerance asked for.
      if (es) g.width = mri::es_kernel_for(g.tolerance, s).width;
      bound = es ? g.tolerance : mri::gridding_error_bound(g.width, s);
    } catch (const core::UsageError&) {
      continue;  // beta not real: W too narrow for sigma (Kaiser-Bessel; es widths always fit)
    }
    const int w = g.width;
    t0 = std::chrono::steady_clock::now();
    const mri::cvec out = mri::gridding_fhd(p, g);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const core::ErrorMetrics m = core::compare(direct, out);
    const int grid = mri::oversampled_size(p.grid[0], s);
    char tolerance[16] = "-";
    if (es) snprintf(tolerance, sizeof tolerance, "%.0e", g.tolerance);
    printf("| %s | %s | %d | %.3g | %d | %.2e | %.2e | %.2e | %.1f |\n", es ? "es" : "kb", tolerance, w, s, grid,
           m.rel_l2, m.max_abs / peak, bound, ms);
    if (!json_path.empty()) {
      core::json r = core::new_record("mri", "gridding");
      r["title"] = es ? "gridding F^H d, exponential of semicircle" : "gridding F^H d, Kaiser-Bessel";
      r["kind"] = "cpu";
      r["device"] = nullptr;
      r["problem"] = {{"name", p.name}, {"params", p.params}, {"digest", p.digest()}};
      r["params"] = {{"kernel", es ? "es" : "kb"}, {"kernel_width", w}, {"oversampling", s}, {"grid", grid}};
      if (es) r["params"]["tolerance"] = g.tolerance;
      r["timing"] = {{"kernel_ms", {{"median", ms}, {"runs", 1}}}, {"total_ms", {{"median", ms}, {"runs", 1}}},
                     {"direct_ms", direct_ms}};
      r["throughput"] = {{"value", double(p.samples()) / (ms * 1e-3)}, {"unit", "samples/s"}};
      r["validation"] = {{"reference", "cpu-double"}, {"pass", m.finite && m.rel_l2 <= bound},
                         {"rel_l2", m.rel_l2}, {"max_abs_over_peak", m.max_abs / peak}, {"bound", bound},
                         {"psnr_db", m.psnr_db}};
      core::append_record(json_path, r);
    }
  }
  return core::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return run(argc, argv); });
}
