#include "core/harness.hpp"

#include <cstdio>

#include "core/device_memory.hpp"
#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "core/progress.hpp"
#include "core/ranks.hpp"

namespace core {

namespace {

int run(Track& track, StepIdentity& step, int argc, char** argv) {
  const std::string program = step.track + "_" + step.id;
  CLI::App app{"stepwise " + step.track + " " + step.id + ": " + step.title, program};
  CoreOptions o;
  add_core_options(app, o);
  track.add_options(app);
  for (const auto& [flag, value] : step.flag_defaults) {
    CLI::Option* option = app.get_option_no_throw(flag);
    if (!option) throw std::logic_error(program + " declares a default for " + flag + ", which its track does not have");
    option->default_val(value);  // --help shows it; a flag given on the command line still wins
  }
  add_tunables(app, step.tunables);
  if (auto code = parse_command_line(app, argc, argv)) return *code;

  const Ranks& world = ranks();
  if (world.size > 1 && !step.multi_gpu)
    throw UsageError("launched as " + std::to_string(world.size) + " processes (" + world.launcher + "): " + program +
                     (step.gpu ? " runs on one GPU" : " runs as one process (a CPU program)") +
                     "; only the multi-GPU steps run as one process per GPU");
  // Only rank 0 writes: the others' output would be the same run's, written again.
  const bool writer = world.root();

  // Outputs are checked before any work: a bad path must not cost a whole run.
  if (writer) check_output_path("--json", o.json_path);
  if (writer) check_output_path("--out", o.out);

  // From here on a long run says on stderr that it is alive, in a log too (--quiet: silent).
  StillRunning alive(program, !o.quiet && writer);

  // The device's set-up (the context above all): paid once per process, outside every run,
  // and recorded so that a one-shot program's whole cost can be added up.
  DeviceInfo device;
  const HostClock device_clock;
  if (step.gpu) {
    still_running_stage("setting up the GPU");
    device = require_gpu(o.device + world.local_rank);
  }
  const double device_setup_ms = device_clock.elapsed_ms();
  still_running_stage("preparing the problem");
  track.prepare(o, step.tunables, step.gpu, program);

  auto timer = step.gpu ? make_device_timer() : make_host_timer();
  device_bytes().reset_peak();
  const TimedRuns t = time_runs(track.phases(), *timer, o.warmup, o.repeat, !o.quiet && writer);
  const size_t peak_device_bytes = device_bytes().peak;  // the timed runs' arrays (validation's come after)
  const Rate rate = track.rate(t.kernel_ms.median);

  // --out and --json validate, so that no record or output goes unchecked, unless the track
  // was told to skip it (its record then says so, and counts as not passed).
  const bool skipped = track.validation_skipped();
  const bool validate_now = o.check || ((!o.json_path.empty() || !o.out.empty()) && !skipped);
  Verdict v;
  if (skipped) {
    v.pass = false;
    v.record = {{"reference", "none"}, {"pass", false}, {"skipped", "not validated: the caller checks the output itself"}};
  }
  if (validate_now) {
    NvtxRange r("reference");
    still_running_stage("validating");
    v = track.validate(o);
  }

  if (!writer) return o.check && !v.pass ? kValidationFailed : kOk;

  still_running_stage("writing the outputs");
  if (!o.out.empty()) track.write_output(o.out, v);

  if (!o.json_path.empty()) {
    json params = tunables_json(step.tunables);
    track.describe_params(params);
    json r = step_record(step.track, step.id, step.title, step.gpu, track.problem_json(), params, device, t, o);
    r["work"] = rate.work;
    r["throughput"] = {{"value", rate.value}, {"unit", rate.unit}};
    r["validation"] = v.record;
    if (step.gpu) r["timing"]["device_setup_ms"] = device_setup_ms;
    if (step.gpu)
      r["memory"] = {{"peak_bytes", peak_device_bytes}, {"counts", "the step's device arrays (core::DeviceArray)"}};
    if (step.multi_gpu) r["ranks"] = {{"size", world.size}, {"launcher", world.launcher}};
    track.extend_record(r, v);
    append_record(o.json_path, r);
  }
  track.after_run();

  if (!o.quiet) {
    printf("%s  %s  %s%s%s%s\n", program.c_str(), step.title.c_str(), track.describe().c_str(),
           step.gpu ? "  device=" : "", device.name.c_str(),
           step.multi_gpu ? ("  ranks=" + std::to_string(world.size)).c_str() : "");
    printf("  time    kernel %.4g ms (min %.4g, max %.4g), end-to-end %.4g ms, %d runs\n",
           t.kernel_ms.median, t.kernel_ms.min, t.kernel_ms.max, t.total_ms.median, t.repeat);
    printf("  rate    %.4g %s\n", rate.value, rate.unit.c_str());
    if (validate_now) fputs(v.summary.c_str(), stdout);
  }
  if (o.check && !v.pass) {
    fprintf(stderr, "%s: validation FAILED: %s\n", program.c_str(), v.failure.c_str());
    return kValidationFailed;
  }
  return kOk;
}

}  // namespace

int run_step_program(Track& track, StepIdentity step, int argc, char** argv) {
  return exit_code_of(argv[0], [&] { return run(track, step, argc, argv); });
}

}  // namespace core
