// The one loop of every step program: parse the flags, check the GPU, set up the problem,
// warm up and time the step, validate, write the output and the results record, print, and
// turn the verdict into the exit code. A track's main() supplies only what differs, as a
// Track: its flags, its problem, how it binds the step, what it counts and how it validates.
#pragma once
#include <string>

#include "core/cli.hpp"
#include "core/device.hpp"
#include "core/results.hpp"
#include "core/timing.hpp"

namespace core {

// Who the step is: the step's own declaration (its source's step_info()).
struct StepIdentity {
  std::string track;  // "mri"
  std::string id;     // "03_gather"
  std::string title;  // one line for tables
  bool gpu = false;
  Tunables tunables;  // the step's own flags with their defaults
  FlagDefaults flag_defaults = {};  // track flags whose default the step changes (StepInfo)
  // Runs as one process per GPU under a launcher (core/ranks.hpp): the harness gives rank r
  // GPU --device + its local rank, and only rank 0 prints and writes. A step without it
  // refuses to be launched as several processes.
  bool multi_gpu = false;
};

// The work one run does and the rate it reached, in the track's fixed unit.
struct Rate {
  json work;          // the record's "work": unit, count, and what else the track counts
  double value = 0;   // the throughput
  std::string unit;   // "pairs/s", "photons/ms"
};

// What validation found.
struct Verdict {
  bool pass = true;
  json record;          // the record's "validation" object
  std::string summary;  // printed under the timing (one or more lines, each ending in \n)
  std::string failure;  // why it failed, for stderr
};

class Track {
 public:
  virtual ~Track() = default;
  // The track's own flags (the step's tunables and the core flags are added by the loop).
  virtual void add_options(CLI::App& app) = 0;
  // After parsing and the GPU check: read or generate the problem and make the step.
  // Bad input throws UsageError.
  virtual void prepare(const CoreOptions& core, const Tunables& tunables, bool gpu,
                       const std::string& program) = 0;
  // The step's load / compute / store, bound to the problem and to where the output goes.
  virtual Phases phases() = 0;
  // "problem=small (...)": printed after the program's name.
  virtual std::string describe() const = 0;
  virtual json problem_json() const = 0;
  // Parameters the step chose itself, added to the record's params beside the flags.
  virtual void describe_params(json& params) const { (void)params; }
  virtual Rate rate(double kernel_ms) const = 0;
  // Every rank of a multi-GPU run validates (a check may run the step, and so its collectives);
  // rank 0's verdict is the one printed and recorded.
  virtual Verdict validate(const CoreOptions& core) = 0;
  // True when the user asked that --out and --json skip validation (a track whose output does
  // not come from its validation may offer that; the record then says it was not validated).
  virtual bool validation_skipped() const { return false; }
  // Writes the output of the last run to `path` (--out); the verdict is there when the
  // output carries the reference beside it.
  virtual void write_output(const std::string& path, const Verdict& verdict) = 0;
  // Fields of the record beyond the shared ones (e.g. a profile).
  virtual void extend_record(json& record, const Verdict& verdict) const { (void)record, (void)verdict; }
  // What a run leaves behind besides its output and its record (the trained weights of an
  // autoencoder step): called once everything else is written, whether validation passed or not.
  virtual void after_run() {}
};

// main() of a step program: returns the exit code (README: exit codes).
int run_step_program(Track& track, StepIdentity step, int argc, char** argv);

}  // namespace core
