#include "epic/station.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/files.hpp"
#include "epic/rng.hpp"

namespace epic {

namespace {

constexpr double kSemiEast = 44.0, kSemiNorth = 55.0;  // the ellipse, metres
constexpr double kMinSpacing = 4.0;
constexpr double kOutriggerEast = -293.0, kOutriggerNorth = 9.5, kOutriggerUp = 10.0;

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string f;
  while (std::getline(in, f, ',')) fields.push_back(trim(f));
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Which coordinate a header names: 0 east, 1 north, 2 up, 3 stand id, -1 none.
int column_role(std::string name) {
  name = lower(name);
  if (name.size() > 2 && name.compare(name.size() - 2, 2, "_m") == 0) name.resize(name.size() - 2);
  if (name == "east" || name == "x" || name == "x_east") return 0;
  if (name == "north" || name == "y" || name == "y_north") return 1;
  if (name == "up" || name == "z" || name == "z_up" || name == "height") return 2;
  if (name == "stand" || name == "id" || name == "stand_id") return 3;
  return -1;
}

}  // namespace

Station generate_station(uint64_t seed) {
  Station s;
  s.name = "generated";
  Rng rng(seed, Stream::station);
  const int core_stands = kGeneratedStands - 1;
  // Random sequential placement: a candidate uniform in the ellipse is kept when no stand is
  // closer than the minimum spacing. 255 stands fill ~75% of what this packing can hold, so
  // candidates are rarely refused.
  for (long tries = 0; s.size() < core_stands; ++tries) {
    if (tries > 10000000) throw std::logic_error("generate_station: cannot place the stands");
    const double e = (2 * rng.uniform() - 1) * kSemiEast, n = (2 * rng.uniform() - 1) * kSemiNorth;
    if ((e * e) / (kSemiEast * kSemiEast) + (n * n) / (kSemiNorth * kSemiNorth) > 1) continue;
    bool ok = true;
    for (int i = 0; ok && i < s.size(); ++i)
      ok = std::hypot(s.east[i] - e, s.north[i] - n) >= kMinSpacing;
    if (!ok) continue;
    s.east.push_back(e);
    s.north.push_back(n);
    // The site is not flat: a gentle slope and a few centimetres of unevenness.
    s.up.push_back(0.01 * e - 0.006 * n + 0.05 * (2 * rng.uniform() - 1));
  }
  s.east.push_back(kOutriggerEast);
  s.north.push_back(kOutriggerNorth);
  s.up.push_back(kOutriggerUp);
  return s;
}

Station read_stands(const std::string& path) {
  std::ifstream in = core::open_input_file(path);
  Station s;
  s.name = std::filesystem::path(path).filename().string();
  std::string line;
  int line_no = 0;
  std::vector<int> column;  // role of each column
  int idx[4] = {-1, -1, -1, -1};
  std::map<std::string, int> ids;  // id -> line
  std::vector<int> stand_line;      // the line each stand came from
  auto fail = [&](const std::string& why) -> void {
    throw core::UsageError(path + ":" + std::to_string(line_no) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> fields = split_csv(t);
    if (column.empty()) {  // the header
      for (size_t i = 0; i < fields.size(); ++i) {
        const int role = column_role(fields[i]);
        column.push_back(role);
        if (role < 0) continue;
        if (idx[role] >= 0) fail("column '" + fields[i] + "' names a coordinate that an earlier column already names");
        idx[role] = int(i);
      }
      const char* names[3] = {"east", "north", "up"};
      for (int r = 0; r < 3; ++r)
        if (idx[r] < 0)
          fail(std::string("missing column '") + names[r] + "' (the header must name east, north and up, in metres)");
      continue;
    }
    if (fields.size() != column.size())
      fail("has " + std::to_string(fields.size()) + " fields, the header has " + std::to_string(column.size()));
    double v[3];
    const char* names[3] = {"east", "north", "up"};
    for (int r = 0; r < 3; ++r) {
      const std::string& f = fields[size_t(idx[r])];
      size_t used = 0;
      try {
        v[r] = std::stod(f, &used);
      } catch (const std::exception&) {
        used = std::string::npos;
      }
      if (used != f.size() || f.empty()) fail(std::string(names[r]) + " '" + f + "' is not a number");
      if (!std::isfinite(v[r])) fail(std::string(names[r]) + " is " + f + ", not a finite number");
      if (std::abs(v[r]) > 1e5) fail(std::string(names[r]) + " " + f + " m is more than 100 km from the centre");
    }
    if (idx[3] >= 0) {
      const std::string& id = fields[size_t(idx[3])];
      auto [it, fresh] = ids.emplace(id, line_no);
      if (!fresh) fail("duplicate stand '" + id + "' (first on line " + std::to_string(it->second) + ")");
    }
    for (int i = 0; i < s.size(); ++i)
      if (std::hypot(s.east[i] - v[0], s.north[i] - v[1]) < 1e-3 && std::abs(s.up[i] - v[2]) < 1e-3)
        fail("duplicate stand: the same position as the stand on line " + std::to_string(stand_line[size_t(i)]));
    if (s.size() >= kMaxStands) fail("more than " + std::to_string(kMaxStands) + " stands");
    s.east.push_back(v[0]);
    s.north.push_back(v[1]);
    s.up.push_back(v[2]);
    stand_line.push_back(line_no);
  }
  if (column.empty()) throw core::UsageError(path + ": empty (no header line naming east, north, up)");
  if (s.size() < 2)
    throw core::UsageError(path + ": too few stands (" + std::to_string(s.size()) + "; an interferometer needs at least 2)");
  return s;
}

double extent_east(const Station& s) {
  const auto [lo, hi] = std::minmax_element(s.east.begin(), s.east.end());
  return *hi - *lo;
}
double extent_north(const Station& s) {
  const auto [lo, hi] = std::minmax_element(s.north.begin(), s.north.end());
  return *hi - *lo;
}

}  // namespace epic
