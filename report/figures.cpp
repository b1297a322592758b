#include "figures.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "format.hpp"

namespace report {

namespace fs = std::filesystem;

namespace {

// A gnuplot single-quoted string: no escapes and, unlike double quotes, no `command`
// substitution, so text from a results file cannot run anything.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// A double-quoted column in a gnuplot data file (which has no escapes).
std::string data_label(std::string s) {
  for (char& c : s)
    if (c == '"') c = '\'';
  return "\"" + s + "\"";
}

// Every script starts the same way; noenhanced keeps step ids such as 00_cpu literal.
std::string preamble(const std::string& name, const std::string& title, int width, int height) {
  std::ostringstream s;
  s << "# " << name << ".gp: rendered by stepwise_report with `gnuplot " << name << ".gp`\n"
    << "set terminal pngcairo size " << width << "," << height << " noenhanced font \"Sans,10\"\n"
    << "set output " << quoted(name + ".png") << "\n"
    << "set title " << quoted(title) << "\n";
  return s.str();
}

}  // namespace

Figure speedup_bars(const std::string& name, const std::string& title, const std::string& baseline,
                    const std::vector<Bar>& bars) {
  std::ostringstream dat;
  dat << "# step  speedup_over_" << slug(baseline) << "  gpu  label\n";
  double low = 1, high = 1;
  for (const Bar& b : bars) {
    dat << data_label(b.label) << " " << fmt_data(b.value) << " " << (b.gpu ? 1 : 0) << " "
        << data_label(fmt_speedup(b.value)) << "\n";
    if (b.value > 0) low = std::min(low, b.value), high = std::max(high, b.value);
  }
  std::ostringstream s;
  s << preamble(name, title, 900, 480)
    << "set logscale y\n"
    // Bars rise from the bottom of the graph; the line at 1 is the first row.
    << "set yrange [" << fmt_data(low / 3) << ":" << fmt_data(high * 4) << "]\n"
    << "set xrange [-0.6:" << bars.size() - 0.4 << "]\n"
    << "set ylabel " << quoted("speedup over " + baseline + " (log scale)") << "\n"
    << "set style fill solid 0.85 border -1\n"
    << "set boxwidth 0.7\n"
    << "set grid ytics\n"
    << "set key top left reverse Left\n"
    << "set xtics rotate by -30 left\n"
    << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb \"#444444\"\n"
    << "plot " << quoted(name + ".dat") << " using 0:($3 == 0 ? $2 : NaN):xtic(1) with boxes lc rgb \"#8c8c8c\" title \"CPU\", \\\n"
    << "     '' using 0:($3 == 1 ? $2 : NaN) with boxes lc rgb \"#2b7bba\" title \"GPU\", \\\n"
    << "     '' using 0:2:4 with labels offset 0,0.8 notitle\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

Figure heat_map(const std::string& name, const std::string& title, const std::string& x_name,
                const std::vector<std::string>& x_values, const std::string& y_name,
                const std::vector<std::string>& y_values, const std::string& value_name,
                const std::vector<Cell>& cells) {
  std::ostringstream dat;
  dat << "# " << x_name << "_index  " << y_name << "_index  value  label\n";
  for (const Cell& c : cells)
    dat << c.x << " " << c.y << " " << fmt_data(c.value) << " " << data_label(c.label) << "\n";
  auto tics = [](const std::vector<std::string>& values) {
    std::string t = "(";
    for (size_t i = 0; i < values.size(); ++i) t += (i ? ", " : "") + quoted(values[i]) + " " + std::to_string(i);
    return t + ")";
  };
  std::ostringstream s;
  s << preamble(name, title, 820, 560)
    << "set xlabel " << quoted(x_name) << "\n"
    << "set ylabel " << quoted(y_name) << "\n"
    << "set cblabel " << quoted(value_name) << "\n"
    << "set format cb '%.1s%c'\n"
    << "set xrange [-0.5:" << x_values.size() - 0.5 << "]\n"
    << "set yrange [-0.5:" << y_values.size() - 0.5 << "]\n"
    << "set xtics " << tics(x_values) << "\n"
    << "set ytics " << tics(y_values) << "\n"
    << "set palette defined (0 \"#f7fbff\", 1 \"#c6dbef\", 2 \"#6baed6\", 3 \"#2171b5\")\n"
    << "unset key\n"
    // Cells that were not measured (or failed) stay blank.
    << "plot " << quoted(name + ".dat") << " using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \\\n"
    << "     '' using 1:2:4 with labels font \"Sans,9\"\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

Figure lines(const std::string& name, const std::string& title, const Axes& axes,
             const std::vector<Series>& series) {
  std::ostringstream dat;
  for (size_t i = 0; i < series.size(); ++i) {
    if (i) dat << "\n\n";  // gnuplot's index separator
    dat << "# " << series[i].title << "\n";
    for (const auto& [x, y] : series[i].points) dat << fmt_data(x) << " " << fmt_data(y) << "\n";
  }
  // A log axis cannot show zero or negative values (e.g. chunk 0 for "all samples").
  bool log_x = axes.log_x, log_y = axes.log_y;
  for (const Series& line : series)
    for (const auto& [x, y] : line.points) {
      log_x &= x > 0;
      log_y &= y > 0;
    }
  std::ostringstream s;
  s << preamble(name, title, 900, 520)
    << "set xlabel " << quoted(axes.x_label) << "\n"
    << "set ylabel " << quoted(axes.y_label) << "\n"
    << "set grid\n"
    << "set key outside right top\n";
  // Decade tics read as 10k, 1M, 1G rather than 1e+06.
  if (log_x) s << "set logscale x " << axes.log_base_x << "\n" << (axes.log_base_x == 10 ? "set format x '%.0s%c'\n" : "");
  if (log_y) s << "set logscale y\nset format y '%.0s%c'\n";
  s << "plot ";
  for (size_t i = 0; i < series.size(); ++i)
    s << (i ? ", \\\n     " : "") << quoted(name + ".dat") << " index " << i
      << " using 1:2 with linespoints pt 7 ps 0.8 title " << quoted(series[i].title);
  s << "\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

Figure scaling(const std::string& name, const std::string& title, const std::vector<Series>& series) {
  std::set<double> gpus = {1};
  double top = 1;
  for (const Series& line : series)
    for (const auto& [x, y] : line.points) gpus.insert(x), top = std::max(top, y);
  const double most = *gpus.rbegin();
  top = std::max(top, most);
  std::ostringstream dat;
  dat << "# ideal: speedup = GPUs\n" << "1 1 1\n" << fmt_data(most) << " " << fmt_data(most) << " 1\n";
  for (const Series& line : series) {
    dat << "\n\n# " << line.title << "\n# GPUs  speedup  efficiency\n";
    for (const auto& [x, y] : line.points) dat << fmt_data(x) << " " << fmt_data(y) << " " << fmt_data(y / x) << "\n";
  }
  std::string tics;
  for (double g : gpus) tics += (tics.empty() ? "" : ", ") + fmt_data(g);
  std::ostringstream s;
  s << preamble(name, title, 900, 560)
    << "set xlabel 'GPUs (ranks)'\n"
    << "set ylabel 'speedup over 1 GPU'\n"
    << "set xrange [0.5:" << fmt_data(most + 0.5) << "]\n"
    << "set yrange [0:" << fmt_data(top * 1.15) << "]\n"
    << "set xtics (" << tics << ")\n"
    << "set grid\n"
    << "set key top left box opaque\n"
    << "plot ";
  for (size_t i = 0; i < series.size(); ++i)
    s << quoted(name + ".dat") << " index " << i + 1 << " using 1:2 with linespoints lw 2 pt " << 7 + 2 * (i % 3)
      << " ps 1.2 title " << quoted(series[i].title) << ", \\\n     ";
  // Drawn last, so that a row on the ideal line does not hide it.
  s << quoted(name + ".dat") << " index 0 using 1:2 with lines dt 2 lw 1.5 lc rgb '#222222' title 'ideal (speedup = GPUs)'\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

Figure sky_image(const std::string& name, const std::string& title, const std::string& x_label,
                 const std::string& y_label, const std::vector<std::vector<double>>& rows,
                 const std::vector<Mark>& marks) {
  std::ostringstream image, points;
  for (const auto& row : rows) {  // gnuplot's `matrix`: a line per row (y), a column per x
    for (size_t x = 0; x < row.size(); ++x) image << (x ? " " : "") << fmt_data(row[x]);
    image << "\n";
  }
  points << "# x  y  label\n";
  for (const Mark& m : marks) points << fmt_data(m.x) << " " << fmt_data(m.y) << " " << data_label(m.label) << "\n";
  const size_t w = rows.empty() ? 0 : rows[0].size(), h = rows.size();
  std::ostringstream s;
  s << preamble(name, title, 760, 680)
    << "set size ratio -1\n"
    << "set xrange [-0.5:" << w - 0.5 << "]\n"
    << "set yrange [-0.5:" << h - 0.5 << "]\n"
    << "set xlabel " << quoted(x_label) << "\n"
    << "set ylabel " << quoted(y_label) << "\n"
    << "set cblabel 'intensity / peak'\n"
    << "set palette defined (0 'black', 0.3 '#3b0f70', 0.6 '#de4968', 1 '#fcfdbf')\n"
    << "set key bottom right box opaque\n"
    << "plot " << quoted(name + ".dat") << " matrix with image notitle, \\\n"
    << "     " << quoted(name + "-sources.dat") << " using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb '#00e5ff' title 'simulated sources', \\\n"
    << "     '' using 1:2:3 with labels offset char 0,1.6 tc rgb '#00e5ff' font 'Sans,9' notitle\n";
  return {name, s.str(), {{name + ".dat", image.str()}, {name + "-sources.dat", points.str()}}};
}

Figure montage(const std::string& name, const std::string& title, const std::vector<Panel>& panels) {
  Figure f{name, "", {}};
  const int width = 300 * int(std::max<size_t>(panels.size(), 1)), height = 420;
  std::ostringstream s;
  s << preamble(name, title, width, height)
    << "set multiplot layout 1," << panels.size() << " title " << quoted(title) << "\n"
    << "set size ratio -1\n"
    << "unset xtics\nunset ytics\n"
    << "set palette gray\n"
    << "set bmargin 5\n"
    << "set colorbox horizontal user origin graph 0, graph -0.12 size graph 1, graph 0.05\n";
  for (size_t k = 0; k < panels.size(); ++k) {
    const Panel& p = panels[k];
    const std::string file = name + "-" + std::to_string(k) + ".dat";
    std::ostringstream dat;
    double low = p.low, high = p.high;
    if (!(high > low)) {
      low = 0, high = 0;
      for (const auto& row : p.rows)
        for (double v : row) high = std::max(high, v);
      if (!(high > 0)) high = 1;
    }
    for (const auto& row : p.rows) {
      for (size_t x = 0; x < row.size(); ++x) dat << (x ? " " : "") << fmt_data(row[x]);
      dat << "\n";
    }
    f.data.push_back({file, dat.str()});
    const size_t w = p.rows.empty() ? 0 : p.rows[0].size(), h = p.rows.size();
    s << "set title " << quoted(p.title) << " font 'Sans,9'\n"
      << "set xrange [-0.5:" << w - 0.5 << "]\nset yrange [-0.5:" << h - 0.5 << "]\n"
      << "set cbrange [" << fmt_data(low) << ":" << fmt_data(high) << "]\n"
      << "plot " << quoted(file) << " matrix with image notitle\n";
  }
  s << "unset multiplot\n";
  f.script = s.str();
  return f;
}

Figure image_grid(const std::string& name, const std::string& title, const std::vector<std::string>& row_labels,
                  const std::vector<std::vector<Picture>>& rows) {
  // One picture of the whole grid, white between the images: gnuplot's rgbimage wants every
  // pixel of a rectangle.
  constexpr int kGap = 2;
  int cell_w = 1, cell_h = 1;
  size_t columns = 1;
  for (const auto& row : rows) {
    columns = std::max(columns, row.size());
    for (const Picture& p : row) cell_w = std::max(cell_w, p.width), cell_h = std::max(cell_h, p.height);
  }
  const int width = int(columns) * (cell_w + kGap) - kGap;
  const int height = int(std::max<size_t>(rows.size(), 1)) * (cell_h + kGap) - kGap;
  std::vector<std::array<int, 3>> rgb(size_t(width) * height, {255, 255, 255});  // row 0 at the top
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const Picture& p = rows[r][c];
      const size_t plane = size_t(p.height) * p.width;
      for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x)
          for (int k = 0; k < 3; ++k) {
            const size_t at = size_t(p.channels == 3 ? k : 0) * plane + size_t(y) * p.width + x;
            rgb[(size_t(r) * (cell_h + kGap) + y) * width + c * (cell_w + kGap) + x][k] = at < p.values.size() ? p.values[at] : 0;
          }
    }
  std::ostringstream dat;
  dat << "# x  y  red  green  blue (0..255), y = 0 at the bottom\n";
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto& v = rgb[size_t(height - 1 - y) * width + x];
      dat << x << " " << y << " " << v[0] << " " << v[1] << " " << v[2] << "\n";
    }
  std::ostringstream tics;
  for (size_t r = 0; r < rows.size() && r < row_labels.size(); ++r)
    tics << (r ? ", " : "") << quoted(row_labels[r]) << " " << fmt_data(height - 1 - (r * (cell_h + kGap) + (cell_h - 1) / 2.0));
  const int scale = std::max(2, std::min(6, 1100 / std::max(width, 1)));
  std::ostringstream s;
  s << preamble(name, title, std::max(480, width * scale + 160), height * scale + 110)
    << "set size ratio -1\n"
    << "set xrange [-0.5:" << width - 0.5 << "]\n"
    << "set yrange [-0.5:" << height - 0.5 << "]\n"
    << "unset xtics\n"
    << "set ytics (" << tics.str() << ") scale 0\n"
    << "unset border\n"
    << "unset key\n"
    << "plot " << quoted(name + ".dat") << " using 1:2:3:4:5 with rgbimage notitle\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

Figure heat_profile(const std::string& name, const std::string& title, const Profile& p) {
  const bool exact = !p.exact.empty(), errors = !p.stderr_.empty();
  std::ostringstream dat;
  dat << "# r_mm  heat_W_per_cm3  stderr  exact  z=(heat-exact)/stderr\n";
  for (size_t i = 0; i < p.r_mm.size(); ++i) {
    const double err = errors ? p.stderr_[i] : 0;
    const double z = exact && err > 0 ? (p.heat[i] - p.exact[i]) / err : NAN;
    // Log scale: a shell without deposits cannot be drawn.
    dat << fmt_data(p.r_mm[i]) << " " << fmt_data(p.heat[i] > 0 ? p.heat[i] : NAN) << " " << fmt_data(err) << " "
        << fmt_data(exact && p.exact[i] > 0 ? p.exact[i] : NAN) << " " << fmt_data(z) << "\n";
  }
  double r_max = 0, z_max = 3;
  for (size_t i = 0; i < p.r_mm.size(); ++i) {
    r_max = std::max(r_max, p.r_mm[i]);
    if (exact && errors && p.stderr_[i] > 0) z_max = std::max(z_max, std::fabs(p.heat[i] - p.exact[i]) / p.stderr_[i]);
  }
  const double z_tic = std::ceil(z_max / 2);  // tics -z_tic, 0, z_tic stay clear of the panel join
  const std::string file = quoted(name + ".dat");
  std::ostringstream s;
  s << preamble(name, title, 900, exact && errors ? 680 : 520)
    << "set xrange [0:" << fmt_data(r_max * 1.01) << "]\n"
    << "set lmargin 12\n";
  if (exact && errors) s << "set multiplot\nset size 1, 0.68\nset origin 0, 0.32\nset bmargin 0\nset format x ''\n";
  else s << "set xlabel 'radius r (mm)'\n";
  s << "set ylabel 'heat (W/cm^3, log scale)'\n"
    << "set logscale y\n"
    << "set grid\n"
    << "set key top right\n"
    << "plot ";
  if (exact) s << file << " using 1:4 with lines lw 2 lc rgb '#d62728' title 'exact transport solution', \\\n     ";
  s << file << " using 1:2:3 with yerrorbars pt 7 ps 0.6 lc rgb '#2b7bba' title 'Monte Carlo (1 standard error)'\n";
  if (exact && errors)
    // The residual in standard errors shows what the log scale hides: a bias of a few
    // per cent is many standard errors at 2^30 photons.
    s << "unset title\nset size 1, 0.32\nset origin 0, 0\nset tmargin 0\nset bmargin 3.5\nset format x '% g'\n"
      << "unset logscale y\n"
      << "set yrange [" << fmt_data(-z_max * 1.15) << ":" << fmt_data(z_max * 1.15) << "]\n"
      << "set ytics (" << fmt_data(-z_tic) << ", 0, " << fmt_data(z_tic) << ")\n"
      << "set xlabel 'radius r (mm)'\n"
      << "set ylabel '(MC - exact) / s.e.'\n"
      << "unset key\n"
      << "plot " << file << " using 1:5 with impulses lw 2 lc rgb '#2b7bba', 0 lc rgb '#444444' notitle\n"
      << "unset multiplot\n";
  return {name, s.str(), {{name + ".dat", dat.str()}}};
}

namespace {

// The advance of each character of gnuplot's 'Sans,9' under pngcairo (DejaVu Sans, hinted to
// whole pixels; measured), so that the roofline's labels are laid out before gnuplot draws
// them. A character outside ASCII counts as a wide one.
double label_width_px(const std::string& text) {
  static const char* const classes[][2] = {{"ijl", "3"},         {",-./:;IJf| '", "4"}, {"!()[]rt", "5"},
                                           {"\"*?_`sz", "6"},    {"FLPTYacekovxy", "7"}, {"A&DGHNOQU", "9"},
                                           {"#+<=>M^w~", "10"},  {"%", "11"},            {"@Wm", "12"}};
  double w = 0;
  for (unsigned char c : text) {
    if ((c & 0xc0) == 0x80) continue;  // a UTF-8 continuation byte
    double advance = c >= 0x80 ? 12 : 8;  // digits, most capitals and lower-case letters: 8
    for (const auto& cls : classes)
      if (c < 0x80 && std::string(cls[0]).find(char(c)) != std::string::npos) advance = std::atof(cls[1]);
    w += advance;
  }
  // Kerning and another machine's Sans (fontconfig's choice) draw a little wider or narrower.
  return w * 1.04 + 2;
}

// Places labels that want the heights `want` (ascending, pixels) at least `gap` apart, each as
// near its wish as the others allow (touching labels move as a block centred on their wishes),
// within [lo, hi]; the caller makes room for them all.
std::vector<double> spread(const std::vector<double>& want, double gap, double lo, double hi) {
  struct Block {
    size_t first, count;
    double start;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < want.size(); ++i) {
    Block b{i, 1, want[i]};
    while (!blocks.empty() && blocks.back().start + double(blocks.back().count) * gap > b.start) {
      const Block a = blocks.back();
      blocks.pop_back();
      double sum = 0;
      const size_t n = a.count + b.count;
      for (size_t j = a.first; j < a.first + n; ++j) sum += want[j] - double(j - a.first) * gap;
      b = {a.first, n, sum / double(n)};
    }
    blocks.push_back(b);
  }
  std::vector<double> at(want.size());
  for (const Block& b : blocks)
    for (size_t k = 0; k < b.count; ++k) at[b.first + k] = b.start + double(k) * gap;
  for (size_t i = 0; i < at.size(); ++i) at[i] = std::max(at[i], i ? at[i - 1] + gap : lo);
  for (size_t i = at.size(); i-- > 0;) at[i] = std::min(at[i], i + 1 < at.size() ? at[i + 1] - gap : hi);
  return at;
}

// The roofline's canvas, in pixels: fixed margins, so that the labels are laid out in the
// plot's own pixels.
constexpr double kCanvasWidth = 900, kCanvasHeight = 700;
constexpr double kLeft = 80, kRight = 20, kTop = 40, kBottom = 60;
constexpr double kLabelLine = 14;  // a line of 'Sans,9' (13 pixels from ascender to descender) and one between
constexpr double kLabelGap = 10;   // from a rung's centre to its label
constexpr double kLabelWrap = 300;  // a label of several rungs wraps after this many pixels

}  // namespace

Figure roofline(const std::string& name, const std::string& title, double bandwidth, const std::string& bandwidth_title,
                const std::vector<Roof>& roofs, const std::vector<RooflineMark>& points) {
  std::ostringstream dat;
  dat << "# rung  intensity_flop_per_byte  attained_flop_per_s  flop  compulsory_bytes  kernel_s\n";
  // The axes hold every point and every ridge (where a roof meets the diagonal); the labels'
  // room on the right follows below.
  double x_low = INFINITY, x_high = 0, y_low = INFINITY, y_high = 0;
  std::vector<std::array<double, 2>> at;
  for (const RooflineMark& p : points) {
    const double x = p.flop / p.bytes, y = p.flop / p.seconds;
    dat << data_label(p.label) << " " << fmt_data(x) << " " << fmt_data(y) << " " << fmt_data(p.flop) << " "
        << fmt_data(p.bytes) << " " << fmt_data(p.seconds) << "\n";
    at.push_back({x, y});
    x_low = std::min(x_low, x), x_high = std::max(x_high, 30 * x), y_low = std::min(y_low, y), y_high = std::max(y_high, y);
  }
  double top = 0;
  for (const Roof& r : roofs) {
    x_low = std::min(x_low, r.rate / bandwidth), x_high = std::max(x_high, 10 * r.rate / bandwidth);
    top = std::max(top, r.rate);
  }
  y_high = std::max(y_high, top);
  if (!(x_high > 0)) x_low = 1, x_high = 10, y_low = 1, y_high = 10;
  x_low /= 10, y_low = std::min(y_low / 4, x_low * bandwidth), y_high *= 4;

  // The rungs of a ladder share their problem, so they share one intensity (a column of points)
  // and often nearly one height. Rungs whose marks touch (within a label line of each other's
  // height) share one label: the numbered rungs fastest first, then a peer's, its name once
  // ("pytorch tf32_cl_compile_ro, tf32_cl"), wrapped into lines of at most kLabelWrap pixels.
  // The lines of a column stack to its right, each at least a line from the next, as near
  // their rungs' height as the others allow and inside the plot (below the key at its top
  // left); a thin line joins each to its rungs' height. The x axis runs as far right as the
  // longest line needs.
  const double plot_w = kCanvasWidth - kLeft - kRight;
  double plot_h = kCanvasHeight - kTop - kBottom;
  const double decades_y = std::log10(y_high / y_low);
  auto py = [&](double y) { return plot_h * std::log10(y / y_low) / decades_y; };
  struct Line {
    std::string text;
    size_t column;  // index into column_x
    double rungs_y;  // the height of its rungs (their geometric mean), flop/s
    size_t index, lines;  // its place among its label's lines
    double want = 0, y = 0;  // pixels above the plot's bottom
  };
  std::vector<Line> label_lines;
  std::vector<double> column_x;
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return at[a] < at[b]; });
  for (size_t k = 0; k < order.size();) {
    size_t column_end = k + 1;
    while (column_end < order.size() && std::fabs(std::log(at[order[column_end]][0] / at[order[k]][0])) < 0.05)
      ++column_end;
    column_x.push_back(at[order[k]][0]);
    for (size_t g = k; g < column_end;) {
      size_t g_end = g + 1;
      while (g_end < column_end && py(at[order[g_end]][1]) - py(at[order[g]][1]) < kLabelLine) ++g_end;
      std::vector<size_t> members(order.begin() + long(g), order.begin() + long(g_end));
      std::reverse(members.begin(), members.end());  // fastest first
      // A peer's rows ("pytorch tf32_cl") after the numbered rungs, each peer's together.
      auto peer = [&](size_t i) {
        const std::string& l = points[i].label;
        const bool rung = !l.empty() && std::isdigit(static_cast<unsigned char>(l[0]));
        return rung ? std::string() : l.substr(0, l.find(' '));
      };
      std::vector<std::string> peers;
      for (size_t i : members)
        if (!peer(i).empty() && std::find(peers.begin(), peers.end(), peer(i)) == peers.end()) peers.push_back(peer(i));
      auto rank = [&](size_t i) {
        return peer(i).empty() ? 0 : 1 + (std::find(peers.begin(), peers.end(), peer(i)) - peers.begin());
      };
      std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
      std::vector<std::string> texts;
      std::string text, last_peer;
      double log_y = 0;
      for (size_t i : members) {
        log_y += std::log(at[i][1]);
        const std::string& full = points[i].label;
        const std::string who = peer(i);
        const bool shared = !who.empty() && who == last_peer && full.size() > who.size();
        std::string piece = shared ? full.substr(who.size() + 1) : full;
        if (!text.empty() && label_width_px(text + ", " + piece) > kLabelWrap) {
          texts.push_back(text + ",");
          text.clear();
          piece = full;  // a new line names its peer again
        }
        text += (text.empty() ? "" : ", ") + piece;
        last_peer = who;
      }
      texts.push_back(text);
      const double rungs_y = std::exp(log_y / double(members.size()));
      for (size_t n = 0; n < texts.size(); ++n)
        label_lines.push_back({texts[n], column_x.size() - 1, rungs_y, n, texts.size()});
      g = g_end;
    }
    k = column_end;
  }
  // The x axis's decades, so that every line ends inside the plot: a line of w pixels from
  // kLabelGap right of its column at p decades needs plot_w (1 - (kLabelGap + w + 4) / plot_w) >= plot_w p / D.
  double decades_x = std::log10(x_high / x_low);
  for (const Line& l : label_lines) {
    const double room = plot_w - kLabelGap - label_width_px(l.text) - 4;
    if (room > 0) decades_x = std::max(decades_x, plot_w * std::log10(column_x[l.column] / x_low) / room);
  }
  x_high = x_low * std::pow(10, decades_x);
  auto px = [&](double x) { return plot_w * std::log10(x / x_low) / decades_x; };
  // The key, at the top left: about a line of 'Sans,10' per entry, its samples and its box.
  double key_w = 0;
  key_w = std::max(key_w, label_width_px(bandwidth_title));
  for (const Roof& r : roofs) key_w = std::max(key_w, label_width_px(r.title));
  key_w = key_w * 10 / 9 + 80;
  const double key_h = 16 * double(roofs.size() + 2) + 12;
  // Columns whose labels would overlap stack together; the canvas grows where a stack needs it.
  std::vector<size_t> stack_of(column_x.size());
  std::vector<double> stack_left, stack_right;
  for (size_t c = 0; c < column_x.size(); ++c) {
    double right = px(column_x[c]) + kLabelGap;
    for (const Line& l : label_lines)
      if (l.column == c) right = std::max(right, px(column_x[c]) + kLabelGap + label_width_px(l.text));
    const double left = px(column_x[c]) + kLabelGap;
    if (!stack_right.empty() && left < stack_right.back()) {
      stack_right.back() = std::max(stack_right.back(), right);
    } else {
      stack_left.push_back(left), stack_right.push_back(right);
    }
    stack_of[c] = stack_left.size() - 1;
  }
  auto under_key = [&](size_t stack) { return stack_left[stack] < key_w + 8; };
  for (size_t st = 0; st < stack_left.size(); ++st) {
    size_t n = 0;
    for (const Line& l : label_lines) n += stack_of[l.column] == st;
    plot_h = std::max(plot_h, double(n) * kLabelLine + 8 + (under_key(st) ? key_h : 0));
  }
  const double canvas_h = plot_h + kTop + kBottom;
  for (Line& l : label_lines)
    l.want = py(l.rungs_y) + (double(l.lines - 1) / 2 - double(l.index)) * kLabelLine;
  for (size_t st = 0; st < stack_left.size(); ++st) {
    std::vector<Line*> stack;
    for (Line& l : label_lines)
      if (stack_of[l.column] == st) stack.push_back(&l);
    std::stable_sort(stack.begin(), stack.end(), [](const Line* a, const Line* b) { return a->want < b->want; });
    std::vector<double> want;
    for (const Line* l : stack) want.push_back(l->want);
    const double lo = kLabelLine / 2 + 2, hi = plot_h - kLabelLine / 2 - 2 - (under_key(st) ? key_h : 0);
    const std::vector<double> placed = spread(want, kLabelLine, lo, hi);
    for (size_t i = 0; i < stack.size(); ++i) stack[i]->y = placed[i];
  }
  auto data_x = [&](double pixels) { return x_low * std::pow(10, decades_x * pixels / plot_w); };
  auto data_y = [&](double pixels) { return y_low * std::pow(10, decades_y * pixels / plot_h); };
  dat << "\n\n# label  x  y (its left end)  then its line to its rungs: from x, y to x (the labels' places)\n";
  for (const Line& l : label_lines) {
    const double left = px(column_x[l.column]) + kLabelGap;
    dat << data_label(l.text) << " " << fmt_data(data_x(left)) << " " << fmt_data(data_y(l.y)) << " "
        << fmt_data(data_x(px(column_x[l.column]) + 5)) << " " << fmt_data(l.rungs_y) << " " << fmt_data(data_x(left - 2))
        << "\n";
  }
  // The roofs as line segments (a function would be sampled evenly in x, not in log x): the
  // bandwidth's diagonal up to the highest roof, each roof from its ridge on.
  std::ostringstream lines;
  lines << "# intensity  flop_per_s: the bandwidth's diagonal, then each roof (gnuplot index 1, 2, ...)\n"
        << fmt_data(x_low) << " " << fmt_data(x_low * bandwidth) << "\n"
        << fmt_data(top / bandwidth) << " " << fmt_data(top) << "\n";
  for (const Roof& r : roofs)
    lines << "\n\n" << fmt_data(r.rate / bandwidth) << " " << fmt_data(r.rate) << "\n" << fmt_data(x_high) << " " << fmt_data(r.rate) << "\n";

  static const char* const colours[] = {"#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  const std::string roof_file = quoted(name + "-roofs.dat");
  std::ostringstream s;
  s << preamble(name, title, int(kCanvasWidth), int(std::lround(canvas_h)))
    << "set lmargin at screen " << fmt_data(kLeft / kCanvasWidth) << "\n"
    << "set rmargin at screen " << fmt_data(1 - kRight / kCanvasWidth) << "\n"
    << "set tmargin at screen " << fmt_data(1 - kTop / canvas_h) << "\n"
    << "set bmargin at screen " << fmt_data(kBottom / canvas_h) << "\n"
    << "set logscale xy\n"
    << "set format x '%.0s%c'\nset format y '%.0s%c'\n"
    << "set xrange [" << fmt_data(x_low) << ":" << fmt_data(x_high) << "]\n"
    << "set yrange [" << fmt_data(y_low) << ":" << fmt_data(y_high) << "]\n"
    << "set xlabel 'arithmetic intensity (flop per compulsory DRAM byte, log scale)'\n"
    << "set ylabel 'attained (flop/s, log scale)'\n"
    << "set grid\n"
    << "set key top left box opaque\n"
    // A label stays legible where a roof or the grid runs under it.
    << "set style textbox opaque noborder margins 0.5,0.3\n"
    << "plot " << roof_file << " index 0 using 1:2 with lines lw 2 lc rgb '#444444' title " << quoted(bandwidth_title);
  for (size_t i = 0; i < roofs.size(); ++i)
    s << ", \\\n     " << roof_file << " index " << i + 1 << " using 1:2 with lines lw 2 lc rgb '" << colours[i % 5]
      << "' title " << quoted(roofs[i].title);
  if (!points.empty())
    s << ", \\\n     " << quoted(name + ".dat") << " index 0 using 2:3 with points pt 7 ps 1.2 lc rgb '#2b7bba' title 'rungs', \\\n"
      << "     '' index 1 using 4:5:($6-$4):($3-$5) with vectors nohead lw 1 lc rgb '#8c8c8c' notitle, \\\n"
      << "     '' index 1 using 2:3:1 with labels left boxed font 'Sans,9' notitle";
  s << "\n";
  return {name, s.str(), {{name + ".dat", dat.str()}, {name + "-roofs.dat", lines.str()}}};
}

std::string find_gnuplot(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

void write_figures(const std::string& dir, const std::vector<Figure>& figures) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw core::UsageError(dir + ": cannot create the figures folder: " + ec.message());
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".gp" || ext == ".dat" || ext == ".png")) fs::remove(entry.path());
  }
  auto write = [&](const std::string& file, const std::string& text) {
    std::ofstream out(dir + "/" + file);
    out << text;
    if (!out) throw core::RuntimeError(dir + "/" + file + ": write failed");
  };
  for (const Figure& f : figures) {
    write(f.name + ".gp", f.script);
    for (const auto& [file, text] : f.data) write(file, text);
  }
}

void render_figures(const std::string& gnuplot, const std::string& dir, const std::vector<Figure>& figures) {
  auto shell_quoted = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  for (const Figure& f : figures) {
    const std::string command = "cd " + shell_quoted(dir) + " && " + shell_quoted(gnuplot) + " " +
                                shell_quoted(f.name + ".gp") + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) throw core::RuntimeError("popen(gnuplot) failed");
    std::string output;
    std::array<char, 512> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
    const int status = pclose(pipe);
    const std::string png = dir + "/" + f.name + ".png";
    std::error_code ec;
    if (status != 0 || fs::file_size(png, ec) == 0 || ec)
      throw core::RuntimeError("gnuplot " + dir + "/" + f.name + ".gp failed" +
                               (output.empty() ? std::string() : ":\n" + output));
  }
}

}  // namespace report
