// The results record: one JSON object per line (schema 1, see report/README.md), appended by
// --json. The same module checks records when they are read back (report, tests).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/cli.hpp"
#include "core/device.hpp"
#include "core/metrics.hpp"
#include "core/timing.hpp"

namespace core {

using json = nlohmann::json;

struct HostInfo {
  std::string cpu;
  int threads = 0;
};
HostInfo describe_host();
std::string build_commit();  // git describe of the tree the program was built from
std::string now_iso8601();

json stats_json(const Stats& s);
json device_json(const DeviceInfo& d);  // null when d.name is empty (CPU steps)
json host_json(const HostInfo& h);
json validation_json(const std::string& reference, const ErrorMetrics& m, bool pass);

// Fills schema, commit, time and host; the caller supplies the rest.
json new_record(const std::string& track, const std::string& step);

// The fields every step record shares: schema, track, step, title, kind, problem, params,
// device, host, commit, time, timing and the --tag. The track adds work, throughput and validation.
json step_record(const std::string& track, const std::string& step, const std::string& title,
                 bool gpu, const json& problem, const json& params, const DeviceInfo& device,
                 const TimedRuns& timing, const CoreOptions& options);

// Appends one line; creates the file if needed, never its folder (a missing folder is a
// mistyped path, refused by check_output_path before the run).
void append_record(const std::string& path, const json& record);

// Checks that a record has the fields the report relies on, with the right types.
// Returns an empty string when it does, else what is wrong.
std::string check_record(const json& record);

}  // namespace core
