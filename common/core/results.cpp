#include "core/results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "core/error.hpp"
#include "core/version.hpp"

namespace core {

HostInfo describe_host() {
  HostInfo h;
  h.threads = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      h.cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (h.cpu.empty()) h.cpu = "unknown";
  return h;
}

std::string build_commit() {
  // A tree copied without its .git (e.g. to a GPU machine) cannot describe itself at build
  // time; whoever copied it can name the commit in STEPWISE_COMMIT.
  const std::string built = STEPWISE_COMMIT;
  const char* given = std::getenv("STEPWISE_COMMIT");
  return built == "unknown" && given && *given ? given : built;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json stats_json(const Stats& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

json device_json(const DeviceInfo& d) {
  if (d.name.empty()) return nullptr;
  return {{"name", d.name}, {"sm", d.sm}, {"sms", d.sms}, {"clock_mhz", d.clock_mhz}};
}

json host_json(const HostInfo& h) { return {{"cpu", h.cpu}, {"threads", h.threads}}; }

namespace {
// JSON has no Inf or NaN: a non-finite metric is written as null.
json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
}  // namespace

json validation_json(const std::string& reference, const ErrorMetrics& m, bool pass) {
  return {{"reference", reference},         {"rel_l2", number_or_null(m.rel_l2)},
          {"max_abs", number_or_null(m.max_abs)}, {"psnr_db", number_or_null(m.psnr_db)},
          {"snr_db", number_or_null(m.snr_db)},   {"compared", m.count},
          {"pass", pass}};
}

json new_record(const std::string& track, const std::string& step) {
  return {{"schema", 1},
          {"track", track},
          {"step", step},
          {"commit", build_commit()},
          {"time", now_iso8601()},
          {"host", host_json(describe_host())}};
}

json step_record(const std::string& track, const std::string& step, const std::string& title,
                 bool gpu, const json& problem, const json& params, const DeviceInfo& device,
                 const TimedRuns& t, const CoreOptions& options) {
  json r = new_record(track, step);
  r["title"] = title;
  r["kind"] = gpu ? "gpu" : "cpu";
  r["problem"] = problem;
  r["params"] = params;
  r["device"] = device_json(device);
  r["timing"] = {{"kernel_ms", stats_json(t.kernel_ms)},
                 {"total_ms", stats_json(t.total_ms)},
                 {"load_ms", stats_json(t.load_ms)},
                 {"store_ms", stats_json(t.store_ms)},
                 {"first_run_ms", t.first_ms},
                 {"repeat", t.repeat},
                 {"warmup", options.warmup}};
  if (!options.tag.empty()) r["tag"] = options.tag;
  return r;
}

void append_record(const std::string& path, const json& record) {
  // One write() of the whole line on a file opened for appending: the kernel appends it at
  // the end in one piece, so programs appending to one file at once never interleave their
  // records (a buffered stream would split a large record into several writes).
  const std::string line = record.dump() + '\n';
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError(path + ": cannot open results file for appending: " + std::strerror(errno));
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int write_errno = errno;
  const int closed = ::close(fd);
  if (written != ssize_t(line.size()))
    throw RuntimeError(path + ": the record was not written: " +
                       (written < 0 ? std::strerror(write_errno) : "short write (disk full?)"));
  if (closed != 0) throw RuntimeError(path + ": the record was not written: close: " + std::strerror(errno));
}

std::string check_record(const json& r) {
  if (!r.is_object()) return "not a JSON object";
  if (!r.contains("schema") || r["schema"] != 1) return "missing or unsupported 'schema' (want 1)";
  for (const char* key : {"track", "step"})
    if (!r.contains(key) || !r[key].is_string()) return std::string("missing string '") + key + "'";
  if (r.contains("tag") && !r["tag"].is_string()) return "'tag' is not a string";
  if (r.contains("device") && !r["device"].is_null() &&
      (!r["device"].is_object() || !r["device"].contains("name") || !r["device"]["name"].is_string()))
    return "'device' is neither null nor an object with a string 'name'";
  if (r["track"] == "probe") {
    if (!r.contains("ceilings") || !r["ceilings"].is_object()) return "probe record without 'ceilings'";
    if (!r.contains("device") || !r["device"].is_object()) return "probe record without 'device'";
    for (const auto& c : r["ceilings"].items())
      if (!c.value().is_number()) return "probe ceiling '" + c.key() + "' is not a number";
    return "";
  }
  if (!r.contains("kind") || (r["kind"] != "cpu" && r["kind"] != "gpu"))
    return "missing 'kind' (cpu|gpu)";
  if (!r.contains("problem") || !r["problem"].is_object() || !r["problem"].contains("name") ||
      !r["problem"]["name"].is_string())
    return "missing string 'problem.name'";
  if (r.contains("params") && !r["params"].is_object()) return "'params' is not an object";
  if (!r.contains("timing") || !r["timing"].is_object()) return "missing 'timing'";
  for (const char* t : {"kernel_ms", "total_ms"}) {
    const auto& s = r["timing"].value(t, json());
    if (!s.is_object() || !s.contains("median") || !s["median"].is_number())
      return std::string("missing number 'timing.") + t + ".median'";
  }
  if (!r.contains("throughput") || !r["throughput"].contains("value") ||
      !r["throughput"]["value"].is_number() || !r["throughput"].contains("unit"))
    return "missing 'throughput.value' or 'throughput.unit'";
  if (!r.contains("validation") || !r["validation"].is_object() ||
      !r["validation"].contains("pass") || !r["validation"]["pass"].is_boolean())
    return "missing boolean 'validation.pass'";
  if (r["kind"] == "gpu" && (!r.contains("device") || !r["device"].is_object()))
    return "GPU record without 'device'";
  return "";
}

}  // namespace core
