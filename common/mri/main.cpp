// The MRI harness: main() for every MRI step program. A step supplies only its algorithm
// (step.hpp); this file parses the flags, builds or reads the problem, times the step,
// validates it, and writes the output and the results record.
#include <cstdio>

#include "cli.hpp"
#include "device.hpp"
#include "error.hpp"
#include "npy.hpp"
#include "nvtx.hpp"
#include "problem.hpp"
#include "results.hpp"
#include "step.hpp"
#include "validation.hpp"

namespace mri {
namespace {

struct Options {
  core::CoreOptions core;
  std::string kernel = "fhd";
  std::string parboil_input, parboil_expect;
  double noise = 0;
  size_t samples = 0;  // 0: all
};

Problem load_problem(const Options& o, bool gpu, const std::string& program) {
  const int sources = !o.core.input.empty() + !o.parboil_input.empty();
  if (sources > 1) throw core::UsageError("--input and --input-parboil are exclusive");
  if (sources > 0 && o.samples) throw core::UsageError("--samples applies to the built-in --size problems only");
  if (!o.parboil_input.empty()) return load_parboil(o.parboil_input);
  if (!o.core.input.empty()) return load_folder(o.core.input);
  if (o.core.size == "large" && !gpu && o.samples == 0)
    throw core::UsageError("--size large is the GPU scale (8.4e11 voxel-sample pairs); " + program +
                           " would take hours on a CPU. Use --size small.");
  return generate(o.core.size, o.core.seed, o.noise, o.samples);
}

int run(int argc, char** argv) {
  const StepInfo info = step_info();
  const std::string program = "mri_" + info.id;
  CLI::App app{"stepwise mri " + info.id + ": " + info.title, program};
  Options o;
  core::add_core_options(app, o.core);
  app.add_option("--kernel", o.kernel, "fhd (F^H d) or q (Q)")->check(CLI::IsMember({"fhd", "q"}))->capture_default_str();
  app.add_option("--input-parboil", o.parboil_input, "Parboil mri-q input file (Q only)");
  app.add_option("--expect-parboil", o.parboil_expect, "Parboil mri-q reference output: validate against it with Parboil's tolerance");
  app.add_option("--noise", o.noise, "Complex Gaussian noise on the generated data (fraction of |d(0)|)")->check(CLI::Range(0.0, 10.0));
  app.add_option("--samples", o.samples, "Keep only the first N k-space samples of the --size problem: tuning sweeps keep the full voxel grid at a fraction of the time")->check(CLI::Range(size_t(1), kMaxSamples));
  core::Tunables tunables = info.tunables;
  core::add_tunables(app, tunables);
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;

  const Kernel kernel = o.kernel == "q" ? Kernel::q : Kernel::fhd;
  core::DeviceInfo device;
  if (info.gpu) device = core::require_gpu(o.core.device);

  Problem p = load_problem(o, info.gpu, program);
  if (kernel == Kernel::fhd && !p.has_data())
    throw core::UsageError(p.name + ": has no k-space data d (a Parboil mri-q input); use --kernel q");
  if (!o.parboil_expect.empty() && o.parboil_input.empty())
    throw core::UsageError("--expect-parboil needs --input-parboil");

  const Inputs in{kernel, int(p.samples()), int(p.voxels()),
                  p.kx.data(), p.ky.data(), p.kz.data(), p.phiR.data(), p.phiI.data(),
                  p.has_data() ? p.dR.data() : nullptr, p.has_data() ? p.dI.data() : nullptr,
                  p.x.data(), p.y.data(), p.z.data(), p.grid[0], p.grid[1], p.grid[2]};
  std::vector<float> outR(p.voxels()), outI(p.voxels());
  std::unique_ptr<Step> step = make_step(tunables);
  const core::Phases phases{
      [&] { core::NvtxRange r("load"); step->load(in); },
      [&] { core::NvtxRange r("compute"); step->compute(); },
      [&] { core::NvtxRange r("store"); step->store(outR.data(), outI.data()); }};
  auto timer = info.gpu ? core::make_device_timer() : core::make_host_timer();
  const core::TimedRuns t = core::time_runs(phases, *timer, o.core.warmup, o.core.repeat, !o.core.quiet);

  const double pairs = double(p.samples()) * double(p.voxels());
  const double pairs_per_s = pairs / (t.kernel_ms.median * 1e-3);

  const bool validate_now = o.core.check || !o.core.json_path.empty();
  Verdict v;
  if (validate_now) {
    core::NvtxRange r("reference");
    v = o.parboil_expect.empty()
            ? validate(p, kernel, info.accuracy, outR.data(), outI.data(), o.core.seed)
            : validate_parboil(load_parboil_output(o.parboil_expect, p.voxels()), outR.data(), outI.data());
  }

  if (!o.core.out.empty()) {
    std::vector<std::complex<float>> out(p.voxels());
    for (size_t i = 0; i < out.size(); ++i) out[i] = {outR[i], outI[i]};
    const std::vector<size_t> shape = p.grid[0] ? std::vector<size_t>{size_t(p.grid[2]), size_t(p.grid[1]), size_t(p.grid[0])}
                                                : std::vector<size_t>{p.voxels()};
    core::write_npy(o.core.out, shape, out.data());
  }

  if (!o.core.json_path.empty()) {
    core::json params = {{"kernel", kernel_name(kernel)}, {"accuracy", accuracy_name(info.accuracy)}};
    for (const auto& tu : tunables) params[tu.name] = tu.value;
    core::json r = core::step_record("mri", info.id, info.title, info.gpu,
                                     {{"name", p.name}, {"params", p.params}, {"digest", p.digest()}},
                                     params, device, t, o.core);
    // 14 FP32 operations per pair besides the sine and cosine: 5 for the phase k.x,
    // 1 for the 2 pi, 8 for the complex multiply-accumulate.
    r["work"] = {{"unit", "pairs"}, {"count", pairs}, {"flop", 14 * pairs}, {"sincos", pairs}};
    r["throughput"] = {{"value", pairs_per_s}, {"unit", "pairs/s"}};
    r["validation"] = core::validation_json(v.reference, v.metrics, v.pass);
    r["validation"]["threshold"] = v.threshold;
    core::append_record(o.core.json_path, r);
  }

  if (!o.core.quiet) {
    printf("%s  %s  kernel=%s  problem=%s (%zu samples x %zu voxels)%s%s\n", program.c_str(),
           info.title.c_str(), kernel_name(kernel), p.name.c_str(), p.samples(), p.voxels(),
           info.gpu ? "  device=" : "", device.name.c_str());
    printf("  time    kernel %.4g ms (min %.4g, max %.4g), end-to-end %.4g ms, %d runs\n",
           t.kernel_ms.median, t.kernel_ms.min, t.kernel_ms.max, t.total_ms.median, t.repeat);
    printf("  rate    %.4g pairs/s\n", pairs_per_s);
    if (validate_now)
      printf("  check   %s vs %s on %zu voxels: rel_l2 %.3g (limit %.3g), max_abs %.3g, PSNR %.1f dB%s\n",
             v.pass ? "PASS" : "FAIL", v.reference.c_str(), v.metrics.count, v.metrics.rel_l2,
             v.reference == "parboil" ? 0.0 : v.threshold, v.metrics.max_abs, v.metrics.psnr_db,
             v.reference == "parboil" ? (", " + std::to_string(v.failures) + " components outside Parboil's tolerance").c_str() : "");
  }
  if (o.core.check && !v.pass) {
    fprintf(stderr, "%s: validation FAILED (rel_l2 %.3g)\n", program.c_str(), v.metrics.rel_l2);
    return core::kValidationFailed;
  }
  return core::kOk;
}

}  // namespace
}  // namespace mri

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return mri::run(argc, argv); });
}
