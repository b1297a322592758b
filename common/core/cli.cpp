#include "cli.hpp"

#include <stdexcept>

#include "error.hpp"

namespace core {

void add_core_options(CLI::App& app, CoreOptions& o) {
  app.add_option("--size", o.size, "Built-in generated problem")
      ->check(CLI::IsMember({"tiny", "small", "large"}))
      ->capture_default_str();
  app.add_option("--input", o.input, "Problem folder (meta.json + .npy files) instead of --size");
  app.add_option("--repeat", o.repeat, "Timed runs")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs first")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_flag("--check", o.check, "Validate against the CPU double-precision reference; exit 1 on failure");
  app.add_option("--json", o.json_path, "Append one results record (JSON line) to this file");
  app.add_option("--out", o.out, "Write the output array to this .npy file");
  app.add_option("--seed", o.seed, "Seed of the generated problem")->capture_default_str();
  app.add_option("--device", o.device, "CUDA device index")->check(CLI::Range(0, 63))->capture_default_str();
  app.add_flag("--quiet", o.quiet, "Print only errors");
  app.add_option("--tag", o.tag, "Label for the results record (the tuner writes \"tune\")");
}

void add_tunables(CLI::App& app, Tunables& tunables) {
  for (Tunable& t : tunables)
    app.add_option("--" + t.name, t.value, t.help)
        ->check(CLI::Range(t.min, t.max))
        ->capture_default_str();
}

long tunable(const Tunables& tunables, const std::string& name) {
  for (const Tunable& t : tunables)
    if (t.name == name) return t.value;
  throw std::logic_error("step reads tunable '" + name + "' that it did not declare");
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fprintf(stderr, "%s: error: %s\n", app.get_name().c_str(), e.what());
    fprintf(stderr, "Run with --help for the flags.\n");
    return kBadUsage;
  }
  return std::nullopt;
}

}  // namespace core
