#include "core/cli.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/error.hpp"

namespace core {

namespace {

// A seed is a decimal number in [0, 2^64): "-1" or a number past 2^64 is an error, not a
// silently wrapped or saturated seed.
std::string parse_seed(const std::string& text, uint64_t& seed) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, seed);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
    return "--seed " + text + ": not a non-negative whole number";
  if (ec == std::errc::result_out_of_range) return "--seed " + text + ": larger than 2^64 - 1";
  return "";
}

const Tunable& find(const Tunables& tunables, const std::string& name) {
  for (const Tunable& t : tunables)
    if (t.name == name) return t;
  throw std::logic_error("step reads tunable '" + name + "' that it did not declare");
}

}  // namespace

namespace {
CLI::Validator finite_in(double min, double max, const std::string& description) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (v < min || v > max)
          return "Value " + text + " not in range [" + CLI::detail::to_string(min) + " - " +
                 CLI::detail::to_string(max) + "]";
        return "";
      },
      description);
}
}  // namespace

CLI::Validator FiniteRange(double min, double max) {
  return finite_in(min, max, "FLOAT in [" + CLI::detail::to_string(min) + " - " + CLI::detail::to_string(max) + "]");
}

void add_core_options(CLI::App& app, CoreOptions& o) {
  CLI::Option* size = app.add_option("--size", o.size, "Built-in generated problem")
                          ->check(CLI::IsMember({"tiny", "small", "large"}))
                          ->capture_default_str();
  app.add_option("--input", o.input, "Problem folder (meta.json + .npy files) instead of --size")
      ->excludes(size);
  app.add_option("--repeat", o.repeat, "Timed runs")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs first")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_flag("--check", o.check, "Validate against the CPU double-precision reference; exit 1 on failure");
  app.add_option("--json", o.json_path, "Append one results record (JSON line) to this file");
  app.add_option("--out", o.out, "Write the output array to this .npy file");
  app.add_option_function<std::string>(
         "--seed",
         [&o](const std::string& text) {
           const std::string error = parse_seed(text, o.seed);
           if (!error.empty()) throw CLI::ValidationError(error);
         },
         "Seed of the generated problem, 0 .. 2^64 - 1")
      ->default_str(std::to_string(o.seed));
  app.add_option("--device", o.device, "CUDA device index")->check(CLI::Range(0, 63))->capture_default_str();
  app.add_flag("--quiet", o.quiet, "Print only errors");
  app.add_option("--tag", o.tag, "Label for the results record (the tuner writes \"tune\")");
}

void add_tunables(CLI::App& app, Tunables& tunables) {
  for (Tunable& t : tunables) {
    if (!t.choices.empty())
      app.add_option_function<std::string>(
             "--" + t.name,
             [&t](const std::string& word) {
               t.value = double(std::find(t.choices.begin(), t.choices.end(), word) - t.choices.begin());
             },
             t.help)
          ->check(CLI::IsMember(t.choices))
          ->default_str(t.choices.at(size_t(t.value)));
    else if (t.integer)
      app.add_option_function<long>("--" + t.name, [&t](const long& v) { t.value = double(v); }, t.help)
          ->check(CLI::Range(long(t.min), long(t.max)))
          ->default_str(std::to_string(long(t.value)));
    else
      app.add_option_function<double>("--" + t.name, [&t](const double& v) { t.value = v; }, t.help)
          ->check(FiniteRange(t.min, t.max))
          ->default_str(CLI::detail::to_string(t.value));
  }
}

long tunable(const Tunables& tunables, const std::string& name) {
  const Tunable& t = find(tunables, name);
  if (!t.integer) throw std::logic_error("tunable '" + name + "' is real; read it with real_tunable");
  return long(t.value);
}

double real_tunable(const Tunables& tunables, const std::string& name) { return find(tunables, name).value; }

nlohmann::json tunables_json(const Tunables& tunables) {
  nlohmann::json j = nlohmann::json::object();
  for (const Tunable& t : tunables) {
    if (!t.choices.empty())
      j[t.name] = t.choices.at(size_t(t.value));
    else if (t.integer)
      j[t.name] = long(t.value);
    else
      j[t.name] = t.value;
  }
  return j;
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  // Every real-valued flag, the track's and the step's included, refuses NaN and infinities
  // here, once, whatever range its own check allows.
  for (CLI::Option* opt : app.get_options())
    if (opt->get_type_name().rfind("FLOAT", 0) == 0) opt->check(finite_in(-HUGE_VAL, HUGE_VAL, ""));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An App given no name is named by argv[0], a path: the message names the program by its
    // base name, as exit_code_of's do.
    fprintf(stderr, "%s: error: %s\n", base_name(app.get_name().c_str()), e.what());
    fprintf(stderr, "Run with --help for the flags.\n");
    return kBadUsage;
  }
  return std::nullopt;
}

namespace {

namespace fs = std::filesystem;

// The path without trailing slashes ("out/" names the folder out), so that its parent is the
// folder that holds it.
fs::path without_trailing_slash(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return fs::path(p);
}

// Refuses, naming the flag, a path whose parent folder cannot receive a new entry: the parent
// is missing (nothing is created for it), is a file, or is not writable. A parent that does not
// exist is reported as the nearest ancestor that is a file, where one is.
void check_parent_folder(const std::string& flag, const std::string& path, const fs::path& p) {
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  struct stat st {};
  if (::stat(parent.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": " + parent.string() + " is a file, not a folder");
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
      throw UsageError(flag + " " + path + ": folder " + parent.string() + " is not writable (" + std::strerror(errno) + ")");
    return;
  }
  if (errno != ENOENT && errno != ENOTDIR)
    throw UsageError(flag + " " + path + ": folder " + parent.string() + ": " + std::strerror(errno));
  for (fs::path up = parent.parent_path(); !up.empty() && up != up.root_path(); up = up.parent_path())
    if (::stat(up.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": " + up.string() + " is a file, not a folder");
      break;
    }
  throw UsageError(flag + " " + path + ": folder " + parent.string() + " does not exist");
}

}  // namespace

void check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  const fs::path p = without_trailing_slash(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": is a folder, not a file");
    // A character device is a legitimate sink (/dev/null, /dev/stdout).
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) throw UsageError(flag + " " + path + ": not a regular file");
    if (::access(p.c_str(), W_OK) != 0)
      throw UsageError(flag + " " + path + ": cannot write the file (" + std::strerror(errno) + ")");
    return;
  }
  check_parent_folder(flag, path, p);
}

void make_output_folder(const std::string& flag, const std::string& path) {
  if (path.empty()) throw UsageError(flag + ": names no folder");
  const fs::path p = without_trailing_slash(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": is a file, not a folder");
    if (::access(p.c_str(), W_OK | X_OK) != 0)
      throw UsageError(flag + " " + path + ": folder is not writable (" + std::strerror(errno) + ")");
    return;
  }
  check_parent_folder(flag, path, p);
  // Only the folder named is made (its parent exists by now); the writer then fills it. A
  // parent that takes no new folder, though its permissions say it would (a pseudo-file system
  // such as /proc, where even root cannot), is refused here.
  if (::mkdir(p.c_str(), 0777) != 0 && errno != EEXIST)
    throw UsageError(flag + " " + path + ": cannot make the folder (" + std::strerror(errno) + ")");
}

}  // namespace core
