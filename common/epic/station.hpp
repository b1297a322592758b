// The station: stand positions in metres, east, north and up from the array centre.
//
// Generated (the default): an LWA-SV-like layout of 255 stands placed at random in an ellipse
// 88 m east-west by 110 m north-south, no two closer than 4 m (LWA-SV's own nearest-neighbour
// distances have a median of 5 m and a minimum of 3.4 m; at 5 m, random placement cannot fit 255
// stands into that ellipse), on a gently sloping site, plus one outrigger about 293 m west.
// Or read from a CSV file (--stands; format in datasets/epic.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace epic {

struct Station {
  std::string name;  // "generated" or the file's name
  std::vector<double> east, north, up;
  int size() const { return int(east.size()); }
};

constexpr int kMaxStands = 1024;
constexpr int kGeneratedStands = 256;  // 255 in the ellipse and the outrigger

Station generate_station(uint64_t seed);

// Strict reader: a header line naming the columns, then one stand per line. Columns are
// found by name: east ("east", "x", "x_east"), north ("north", "y", "y_north"), up ("up",
// "z", "height"), each optionally ending in "_m"; an optional "stand" column holds ids.
// A missing column, a field that is not a finite number, a line with the wrong number of
// fields, a duplicate stand (the same id or the same position) or fewer than 2 stands is
// refused with core::UsageError naming the file and the line.
Station read_stands(const std::string& path);

// The station's east-west and north-south extents in metres.
double extent_east(const Station& s);
double extent_north(const Station& s);

}  // namespace epic
