// The report's figures: each is a gnuplot script plus the data files it plots, written
// beside the PNG they render to (so a reader can change a script and re-run gnuplot).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace report {

struct Figure {
  std::string name;  // file stem: <name>.gp renders <name>.png from <name>*.dat
  std::string script;
  std::vector<std::pair<std::string, std::string>> data;  // file name, contents
};

struct Bar {
  std::string label;
  double value;
  bool gpu;
};
Figure speedup_bars(const std::string& name, const std::string& title, const std::string& baseline,
                    const std::vector<Bar>& bars);

struct Cell {
  size_t x, y;  // indices into the axis values
  double value;
  std::string label;
};
Figure heat_map(const std::string& name, const std::string& title, const std::string& x_name,
                const std::vector<std::string>& x_values, const std::string& y_name,
                const std::vector<std::string>& y_values, const std::string& value_name,
                const std::vector<Cell>& cells);

struct Series {
  std::string title;
  std::vector<std::pair<double, double>> points;  // sorted by x
};
struct Axes {
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  int log_base_x = 10;
};
Figure lines(const std::string& name, const std::string& title, const Axes& axes,
             const std::vector<Series>& series);

// Speedup against GPUs, one line per row, under the ideal (speedup = GPUs) dashed: the Scaling
// section's. A point is (GPUs, speedup over the row's one-GPU run); the data file also keeps
// each point's efficiency (speedup / GPUs).
Figure scaling(const std::string& name, const std::string& title, const std::vector<Series>& series);

struct Profile {
  std::vector<double> r_mm, heat, stderr_, exact;  // stderr_ and exact may be empty
};
Figure heat_profile(const std::string& name, const std::string& title, const Profile& p);

// An image (rows of equal length, row 0 at the bottom) with labelled marks on it: EPIC's sky.
struct Mark {
  std::string label;
  double x, y;  // in pixels
};
Figure sky_image(const std::string& name, const std::string& title, const std::string& x_label,
                 const std::string& y_label, const std::vector<std::vector<double>>& rows,
                 const std::vector<Mark>& marks);

// Images side by side, each with its own title and colour range (0 .. its own peak unless
// `range` is set): the reconstruction montage.
struct Panel {
  std::string title;
  std::vector<std::vector<double>> rows;  // row 0 at the bottom
  double low = 0, high = 0;               // colour range; high <= low: the panel's own
};
Figure montage(const std::string& name, const std::string& title, const std::vector<Panel>& panels);

// Images in the rows of a grid, each grid row labelled: the autoencoder's inputs above its
// reconstructions. An image is 8-bit grey (1 channel) or RGB (3), row 0 at the top.
struct Picture {
  int channels = 3, height = 0, width = 0;
  std::vector<int> values;  // channel-major: [channel][row][column], 0..255
};
Figure image_grid(const std::string& name, const std::string& title, const std::vector<std::string>& row_labels,
                  const std::vector<std::vector<Picture>>& rows);

// A roofline, log-log: the bandwidth's diagonal under each compute ceiling, one labelled point
// per rung (its data file also keeps each point's flop and bytes).
struct Roof {
  std::string title;
  double rate;  // flop/s
};
struct RooflineMark {
  std::string label;
  double flop, bytes, seconds;
};
Figure roofline(const std::string& name, const std::string& title, double bandwidth, const std::string& bandwidth_title,
                const std::vector<Roof>& roofs, const std::vector<RooflineMark>& points);

// Where gnuplot is, or "" when it is not on PATH.
std::string find_gnuplot(const std::string& name);

// Writes <dir>/<name>.gp and its data files, after removing the .gp, .dat and .png files
// of an earlier report from `dir` (so that no stale figure survives).
void write_figures(const std::string& dir, const std::vector<Figure>& figures);
// Runs gnuplot on every script in `dir`; throws core::RuntimeError naming the script when
// gnuplot fails or leaves an empty PNG.
void render_figures(const std::string& gnuplot, const std::string& dir, const std::vector<Figure>& figures);

}  // namespace report
