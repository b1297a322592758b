#include "records.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/results.hpp"

namespace report {

namespace fs = std::filesystem;

std::string Record::time() const {
  const auto t = data.find("time");
  return t != data.end() && t->is_string() ? t->get<std::string>() : "";
}

std::string Record::commit() const {
  const auto c = data.find("commit");
  return c != data.end() && c->is_string() ? c->get<std::string>() : "unknown";
}

std::string Record::row_name() const {
  // A peer's modes (PyTorch fp32, tf32_cl) and a step's precisions (ae 08's tf32, bf16) are rows of their own.
  // A mode names its precision already (the peer records both): the mode alone is the row, so a
  // record with params.precision and an older one without it are the same row.
  const auto mode = text_at(data, "params.mode");
  std::string name = mode ? step() + " " + *mode : step();
  if (const auto precision = text_at(data, "params.precision"); precision && !mode) name += " " + *precision;
  // A tagged run of a step (mri 11's --kernel-width 5 as "width5") is a row of its own.
  const std::string t = tag();
  if (!t.empty() && t != "tune" && t != "sizes") name += " (" + t + ")";
  return name;
}

bool Record::gpu() const { return data.value("kind", "") == "gpu"; }

std::string Record::device_name() const {
  const auto d = data.find("device");
  if (d == data.end() || !d->is_object()) return "";
  return d->value("name", "");
}

std::string Record::where() const {
  if (gpu() || track() == "probe") return device_name();
  const std::string cpu = text_at(data, "host.cpu").value_or("unknown CPU");
  const auto threads = number_at(data, "host.threads");
  return threads && *threads > 0 ? cpu + " (" + std::to_string(static_cast<long>(*threads)) + " threads)" : cpu;
}

std::string Record::problem() const { return data["problem"]["name"]; }  // a string: core::check_record
double Record::time_ms() const { return data["timing"]["kernel_ms"]["median"]; }
double Record::total_ms() const { return data["timing"]["total_ms"]["median"]; }
double Record::throughput() const { return data["throughput"]["value"]; }
std::string Record::unit() const { return data["throughput"]["unit"].is_string() ? data["throughput"]["unit"].get<std::string>() : ""; }

bool Record::newer_than(const Record& other) const {
  if (time() != other.time()) return time() > other.time();
  return order > other.order;
}

std::vector<Input> results_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw core::UsageError(dir + ": results folder does not exist (--results)");
  std::vector<Input> inputs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl" || !entry.is_regular_file()) continue;
    inputs.push_back({entry.path().string(), entry.path().filename().string()});
  }
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.name < b.name; });
  return inputs;
}

std::string extra_name(const std::string& path, const std::string& results_dir) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(fs::path(results_dir) / ".." / "..", ec), ec);
  const fs::path file = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (!ec && !root.empty()) {
    const fs::path inside = file.lexically_relative(root);
    if (!inside.empty() && *inside.begin() != ".." && !inside.is_absolute()) return inside.generic_string();
  }
  return fs::path(path).filename().string();
}

namespace {

// Calls visit("track/step", path) for each steps/<track>/<step>/<name> that is a file; a
// missing steps folder has none.
template <class Visit>
void for_each_step_file(const std::string& steps_dir, const char* name, Visit visit) {
  std::error_code ec;
  if (steps_dir.empty() || !fs::is_directory(steps_dir, ec)) return;
  for (const auto& track : fs::directory_iterator(steps_dir)) {
    if (!track.is_directory()) continue;
    for (const auto& step : fs::directory_iterator(track.path())) {
      const fs::path file = step.path() / name;
      if (fs::is_regular_file(file, ec))
        visit(track.path().filename().string() + "/" + step.path().filename().string(), file);
    }
  }
}

}  // namespace

Grids load_grids(const std::string& steps_dir) {
  Grids grids;
  for_each_step_file(steps_dir, "sweep.json", [&](const std::string& key, const fs::path& sweep) {
    std::ifstream in(sweep);
    // ordered_json keeps the grid's keys in the order the file lists them.
    const auto j = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("grid") || !j["grid"].is_object())
      throw core::UsageError(sweep.string() + ": not a sweep (want {\"args\": [...], \"grid\": {...}})");
    auto& keys = grids[key];
    for (const auto& item : j["grid"].items()) keys.push_back(item.key());
  });
  return grids;
}

Parents load_parents(const std::string& steps_dir) {
  Parents parents;
  for_each_step_file(steps_dir, "parent", [&](const std::string& key, const fs::path& file) {
    std::ifstream in(file);
    std::string line, id, kind, more;
    std::getline(in, line);
    std::istringstream words(line);
    words >> id >> kind >> more;
    if (id.empty() || !more.empty() || !(kind.empty() || kind == "reference" || kind == "branch"))
      throw core::UsageError(file.string() + ": want one line, PARENT_ID [reference|branch] or none, not '" + line + "'");
    parents[key] = Parent{id == "none" ? "" : id, kind};
  });
  return parents;
}

namespace {

// What the report needs beyond core::check_record: the per-track fields it draws from.
std::string check_for_report(const json& r) {
  if (r.contains("time") && !r["time"].is_string()) return "'time' is not a string";
  if (r.value("tag", "") == "sizes" && !number_at(r, "work.count"))
    return "'sizes' record without number 'work.count'";
  if (r.contains("ranks")) {
    // The processes of a multi-GPU run (core::Ranks; the peer's DDP world): the report counts
    // GPUs by ranks.size.
    const json& k = r["ranks"];
    if (!k.is_object()) return "'ranks' is not an object";
    if (!k.contains("size") || !k["size"].is_number_integer() || k["size"].get<long long>() < 1 ||
        k["size"].get<long long>() > 1000000)
      return "'ranks.size' is not a positive integer";
    if (k.contains("launcher") && !k["launcher"].is_string()) return "'ranks.launcher' is not a string";
  }
  if (r.contains("profile")) {
    const json& p = r["profile"];
    if (!p.is_object()) return "'profile' is not an object";
    size_t n = 0;
    for (const char* key : {"r_mm", "heat", "stderr", "exact"}) {
      if (!p.contains(key)) {
        if (std::string(key) == "r_mm" || std::string(key) == "heat")
          return std::string("'profile' without '") + key + "'";
        continue;
      }
      const json& a = p[key];
      if (!a.is_array() || a.empty()) return std::string("'profile.") + key + "' is not a non-empty array";
      for (const json& v : a)
        if (!v.is_number()) return std::string("'profile.") + key + "' holds a non-number";
      if (n == 0) n = a.size();
      if (a.size() != n) return "'profile' arrays differ in length";
    }
  }
  if (r.contains("reconstructions")) {
    // ae's --record-images: `count` images in and out, each [channel][row][column] of 0..255.
    const json& g = r["reconstructions"];
    if (!g.is_object()) return "'reconstructions' is not an object";
    for (const char* key : {"count", "channels", "height", "width"})
      if (!g.contains(key) || !g[key].is_number_integer() || g[key].get<long long>() < 1 || g[key].get<long long>() > 4096)
        return std::string("'reconstructions.") + key + "' is not a positive integer";
    const long long count = g["count"], channels = g["channels"], height = g["height"], width = g["width"];
    if (channels != 1 && channels != 3) return "'reconstructions.channels' is not 1 or 3";
    for (const char* key : {"input", "output"}) {
      const std::string bad = std::string("'reconstructions.") + key + "' is not " + std::to_string(count) + " x " +
                              std::to_string(channels) + " x " + std::to_string(height) + " x " + std::to_string(width) +
                              " integers 0..255";
      const json* images = g.contains(key) ? &g[key] : nullptr;
      if (!images || !images->is_array() || (long long)images->size() != count) return bad;
      for (const json& image : *images) {
        if (!image.is_array() || (long long)image.size() != channels) return bad;
        for (const json& plane : image) {
          if (!plane.is_array() || (long long)plane.size() != height) return bad;
          for (const json& row : plane) {
            if (!row.is_array() || (long long)row.size() != width) return bad;
            for (const json& v : row)
              if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 255) return bad;
          }
        }
      }
    }
  }
  return "";
}

}  // namespace

std::vector<Record> load(const std::vector<Input>& inputs) {
  std::vector<Record> records;
  for (const Input& in : inputs) {
    std::ifstream file(in.path, std::ios::binary);
    if (!file) throw core::UsageError(in.path + ": cannot open results file");
    std::vector<std::string> lines;
    for (std::string text; std::getline(file, text);) lines.push_back(std::move(text));
    if (file.bad()) throw core::UsageError(in.path + ": read error");
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& text = lines[i];
      const int line = int(i) + 1;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      // A folder's file by its name, as the report names it; an extra file by the path given,
      // which is where the person who gave it looks.
      const std::string where = (in.appended_locally ? in.path : in.name) + ":" + std::to_string(line) + ": ";
      json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) {
        if (in.appended_locally && i + 1 == lines.size()) {
          fprintf(stderr, "stepwise_report: warning: %sincomplete last line skipped (a run cut off while appending?)\n",
                  where.c_str());
          continue;
        }
        throw core::UsageError(where + "not valid JSON");
      }
      std::string problem = core::check_record(j);
      if (problem.empty()) problem = check_for_report(j);
      if (!problem.empty()) throw core::UsageError(where + problem);
      records.push_back({std::move(j), in.name, line, records.size()});
    }
  }
  return records;
}

// The node at a dotted path ("timing.kernel_ms.median"), or nullptr.
const json* find_path(const json& j, const std::string& path) {
  const json* node = &j;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

std::optional<double> number_at(const json& j, const std::string& path) {
  const json* node = find_path(j, path);
  if (!node || !node->is_number()) return std::nullopt;
  return node->get<double>();
}

std::optional<std::string> text_at(const json& j, const std::string& path) {
  const json* node = find_path(j, path);
  if (!node) return std::nullopt;
  if (node->is_string()) return node->get<std::string>();
  if (node->is_number() || node->is_boolean()) return node->dump();
  return std::nullopt;
}

}  // namespace report
