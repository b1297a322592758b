// mri's sections beside its ladder: the problem's size in the headings, the equivalent rate of
// the gridding rungs, the sampled validation of large problems, the lecture's tuning figure,
// and its studies (gridding by tolerance, the reconstructions, gridding's accuracy).
#include "document_sections.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace report::sections {

std::string problem_label(const Record& r) {
  std::string label = r.problem();
  const json& p = r.data["problem"];
  const auto samples = number_at(p, "params.samples"), voxels = number_at(p, "params.voxels");
  if (samples && voxels)
    label += " (" + printf_string("%.0f", *samples) + " samples x " + printf_string("%.0f", *voxels) + " voxels)";
  return label;
}

// The gridding rungs: the precisions that mri's ceiling leaves unbound (Track::unbound).
bool equivalent_rate(const Record& r) {
  return r.track() == "mri" && track_info("mri").unbound.count(precision_of(r)) > 0;
}

Entry throughput_entry(const Record& r) {
  const std::string rate = fmt_si(r.throughput());
  if (!equivalent_rate(r)) return rate;
  return {rate, rate,
          "equivalent " + r.unit() + ": gridding computes no voxel-sample pair; its rate is the direct sum's pairs "
          "(samples x voxels) over the gridding time",
          true};
}

namespace {

std::string param(const Record& r, const std::string& key) { return text_at(r.data, "params." + key).value_or(""); }
// How the quality table names a reconstruction's image: its method, and gridding's kernel.
std::string image_of(const Record& r) {
  const std::string method = param(r, "method");
  if (method == "ls") return "least squares";
  if (method == "gridding") return "gridding (W " + param(r, "kernel_width") + ", sigma " + param(r, "oversampling") + ")";
  return "gridding of w d (W " + param(r, "kernel_width") + ")";
}
// Where the CG ran: params.solver (cpu | gpu); records from before the GPU solver ran it on the CPU.
// Where CG ran, the GPU named: one table holds every device's records of a problem, and a row
// of one GPU must neither replace nor pass for another's.
std::string solver_of(const Record& r) {
  const std::string s = param(r, "solver");
  if (s != "gpu") return s.empty() ? "cpu" : s;
  std::string name = text_at(r.data, "device.name").value_or("");
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  return name.empty() ? s : s + " (" + name + ")";
}
// The central plane the record holds of its image ("image") or of the true image ("true").
std::vector<std::vector<double>> plane_of(const Record& r, const std::string& which) {
  std::vector<std::vector<double>> rows;
  if (const json* p = find_path(r.data, "slice." + which))
    for (const json& row : *p) {
      rows.emplace_back();
      for (const json& v : row) rows.back().push_back(v.is_number() ? v.get<double>() : NAN);
    }
  return rows;
}

}  // namespace

// Large problems are validated on a seeded sample of outputs; the table says so.
void Writer::sampled_validation_note(const std::vector<const Record*>& rows) {
  std::vector<std::string> sampled;
  double compared = 0, total = 0;
  for (const Record* r : rows) {
    const auto c = number_at(r->data, "validation.compared");
    const auto n = number_at(r->data, "problem.params.voxels");
    if (c && n && *c < *n) {
      sampled.push_back(short_step(r->step()));
      compared = *c;
      total = *n;
    }
  }
  if (sampled.empty()) return;
  if (sampled.size() == rows.size() && rows.size() > 1) {
    md_ << "All rows were";
  } else {
    md_ << (sampled.size() == 1 ? "Row " : "Rows ");
    for (size_t i = 0; i < sampled.size(); ++i) md_ << (i ? ", " : "") << sampled[i];
    md_ << (sampled.size() == 1 ? " was" : " were");
  }
  md_ << " checked on a seeded random sample of the outputs (" << printf_string("%.0f", compared) << " of "
      << printf_string("%.0f", total) << ").\n\n";
}

// The lecture's figure: kernel time against samples per launch, one line per block size.
void Writer::samples_per_launch(const TuneSweep& s, const std::string& heading, const std::string& base) {
  const bool by_threads = std::count(s.axes.begin(), s.axes.end(), "threads") > 0;
  std::vector<Series> series;
  for (const std::string& t : by_threads ? axis_values(s, "threads") : std::vector<std::string>{""}) {
    Series line{by_threads ? "threads " + t : s.step, {}};
    for (const std::string& c : axis_values(s, "chunk")) {
      std::vector<const Record*> at;
      for (const Record* r : s.points)
        if (axis_text(*r, "chunk") == c && (!by_threads || axis_text(*r, "threads") == t)) at.push_back(r);
      if (const Record* b = best_of(at)) line.points.push_back({std::strtod(c.c_str(), nullptr), b->time_ms()});
    }
    if (!line.points.empty()) series.push_back(std::move(line));
  }
  if (series.empty()) return;
  const std::string name = names_(base + "-chunk");
  figures_.push_back(lines(name, "runtime vs samples per launch, " + heading,
                           {"k-space samples per launch (chunk)", "kernel time (ms), best over the other parameters", true, false, 2},
                           series));
  md_ << "![runtime against samples per launch](figures/" << name << ".png)\n\n";
}

// A track's programs beside its ladder (Role::study): mri's reconstructions (mri_recon) in a
// quality table and a montage per problem, and gridding's accuracy against its kernel width
// (mri_gridding_accuracy) with its speed against the exact sum.
void Writer::studies(const std::string& track) {
  std::map<std::string, std::vector<const Record*>> recon;  // by problem digest
  std::vector<const Record*> grid, by_tolerance;
  for (const Record& r : records_) {
    if (r.track() != track) continue;
    // Every GPU run that chose its kernel by --tolerance, the ladder's default ones included.
    if (r.gpu() && number_at(r.data, "params.tolerance") && r.tag().empty()) by_tolerance.push_back(&r);
    if (role_of(r) != Role::study || number_at(r.data, "params.tolerance")) continue;
    if (r.step() == "recon") recon[text_at(r.data, "problem.digest").value_or(r.problem())].push_back(&r);
    else grid.push_back(&r);
  }
  if (!by_tolerance.empty()) tolerance_table(by_tolerance);
  if (recon.empty() && grid.empty()) return;
  md_ << "### Reconstruction\n\n";
  for (const auto& [digest, rows] : recon) quality_table(rows);
  if (!grid.empty()) gridding_curve(grid);
}

// The gridding steps by --tolerance: per problem, kernel and GPU, each step's newest run at
// each tolerance, with the width it chose, the error it reached and its plan's time; a peer's
// (mri_cufinufft: step "cufinufft", a row per method) fastest passing run at each tolerance,
// below the rungs.
void Writer::tolerance_table(const std::vector<const Record*>& all) {
  std::map<std::string, std::map<std::string, const Record*>> groups;  // problem|kernel|device -> step|tolerance
  bool peers = false;
  for (const Record* r : all) {
    const double t = *number_at(r->data, "params.tolerance");
    auto& group = groups[r->problem() + "|" + param(*r, "kernel") + "|" + r->device_name()];
    const std::string at = printf_string("%08.3f", -std::log10(t));  // tighter tolerances below
    if (numbered(r->step())) {
      keep_newest(group, r->step() + "|" + at, *r);
      continue;
    }
    peers = true;
    const std::string key = "~" + r->step() + "|" + at;  // "~": after the numbered steps
    const auto pass = find_path(r->data, "validation.pass");
    if (!(pass && pass->is_boolean() && pass->get<bool>())) continue;  // its fastest that passed
    const auto it = group.find(key);
    if (it == group.end() || r->time_ms() < it->second->time_ms()) group[key] = r;
  }
  md_ << "### Gridding by tolerance\n\n"
      << "The adjoint-NUFFT steps at each `--tolerance` they were run with (the ladder above compares them at "
      << printf_string("%g", kLadderTolerance) << "). The kernel width W is the step's choice; the plan (sorting the "
      << "samples into bins) is made once per problem, outside the timed compute, as a NUFFT library's plan is.";
  if (peers)
    md_ << " A peer's row (`cufinufft`: cuFINUFFT's type 1 under the same harness, `steps/mri/cufinufft/`) is its "
        << "fastest method that passed at that tolerance; its time is its execute, its plan its point sort (setpts), "
        << "its makeplan apart.";
  md_ << "\n\n";
  for (const auto& [key, rows] : groups) {
    const size_t a = key.find('|'), b = key.find('|', a + 1);
    md_ << "**" << key.substr(0, a) << ", " << (key.substr(a + 1, b - a - 1) == "q" ? "Q" : "F^H d") << ", "
        << key.substr(b + 1) << "**\n\n"
        << table_row({"step", "tolerance", "W", "time (ms)", "plan (ms)", "rel. L2 error", "check"}) << table_rule(7, 1);
    for (const auto& [k, r] : rows) {
      const bool peer = !numbered(r->step());
      const auto plan = number_at(r->data, peer && number_at(r->data, "params.setpts_ms") ? "params.setpts_ms" : "params.plan_ms");
      const auto width = number_at(r->data, "params.kernel_width");
      const auto pass = find_path(r->data, "validation.pass");
      md_ << table_row({"`" + (peer ? r->row_name() : r->step()) + "`", printf_string("%g", *number_at(r->data, "params.tolerance")),
                        width ? printf_string("%.0f", *width) : "n/a", fmt_ms(r->time_ms()), plan ? fmt_ms(*plan) : "n/a",
                        fmt_sci(number_at(r->data, "validation.rel_l2")),
                        pass && pass->is_boolean() ? (pass->get<bool>() ? "PASS" : "FAIL") : "n/a"});
    }
    md_ << "\n";
  }
}

// The lecture's quality table: each image against the true image, and where the time went.
void Writer::quality_table(const std::vector<const Record*>& all) {
  std::map<std::string, const Record*> newest;  // one row per (image, F^H d by, Q by, CG on)
  for (const Record* r : all)
    keep_newest(newest, image_of(*r) + "|" + param(*r, "fhd_step") + "|" + param(*r, "q_step") + "|" + solver_of(*r) +
                                "|" + r->tag(), *r);
  std::vector<const Record*> rows;
  for (const auto& n : newest) rows.push_back(n.second);
  // Gridding first, then least squares by what computed its sums: the CPU references, then
  // the ladder's steps in their order.
  auto rank = [](const Record* r) {
    const std::string m = param(*r, "method"), f = param(*r, "fhd_step");
    if (m != "ls") return std::string("0") + m;
    if (f == "cpu-double") return std::string("1");
    if (f == "cpu-single") return std::string("2");
    if (f == "nufft") return std::string("3");
    return "4" + f + param(*r, "q_step") + solver_of(*r);
  };
  std::sort(rows.begin(), rows.end(), [&](const Record* a, const Record* b) { return rank(a) < rank(b); });
  const Record& first = *rows.front();
  const Record& ls = *rows.back();  // least squares sort last, where there are any
  std::string solver;
  if (param(ls, "method") == "ls")
    solver = "least squares by " + param(ls, "iterations") + " CG iterations, lambda " + param(ls, "lambda") + "; ";
  md_ << "Problem `" << first.problem() << "` (digest `" << text_at(first.data, "problem.digest").value_or("?")
      << "`): " << sources_line(rows) << ". Each image against the true image (the object averaged over each voxel); "
      << solver << "times in ms, Q and F^H d by the program named (a ladder step's own program on the problem: its "
      << "end-to-end time as its own record gives it, the copies included, its start and the validation of its output "
      << "not). Per image: the step programs' timed run after one warm-up and the solver with its plan made before; "
      << "first image: per image plus what a fresh process pays once (CUDA contexts, cuFFT plans, first launches). "
      << "A time marked * is a first run: the record predates the split (first image n/a).\n\n"
      << table_row({"image", "F^H d by", "Q by", "CG on", "rel. error (%)", "PSNR (dB)", "Q (ms)", "F^H d (ms)", "solver (ms)",
                    "per image (ms)", "first image (ms)"})
      << table_rule(11, 4);
  for (const Record* r : rows) {
    const bool ls = param(*r, "method") == "ls";
    // Records from before the per-image split hold each sum's first run under the same names.
    const auto first_image = number_at(r->data, "timing.first_image_ms");
    const std::string mark = ls && !first_image ? "*" : "";
    const auto ms = [&](const char* path) { return fmt_ms(number_at(r->data, path).value_or(NAN)) + mark; };
    md_ << table_row({image_of(*r), ls ? "`" + param(*r, "fhd_step") + "`" : "-", ls ? "`" + param(*r, "q_step") + "`" : "-",
                      ls ? solver_of(*r) : "-",
                      printf_string("%.2f", number_at(r->data, "validation.rel_error_pct").value_or(NAN)),
                      // three decimals: the steps' images differ from CPU double's by thousandths of a dB
                      printf_string("%.3f", number_at(r->data, "validation.psnr_db").value_or(NAN)),
                      ls ? ms("timing.q_ms") : "-", ms("timing.fhd_ms"), ls ? ms("timing.solver_ms") : "-",
                      ls && first_image ? fmt_ms(number_at(r->data, "timing.total_ms.median").value_or(NAN)) : "-",
                      first_image ? fmt_ms(*first_image) : "n/a"});
  }
  md_ << "\n";
  montage_of(rows);
}

// True image, gridding, least squares with CPU double and with the fastest ladder step, and
// that image's error: the central plane, one colour range for the images.
void Writer::montage_of(const std::vector<const Record*>& rows) {
  const Record *gridding = nullptr, *reference = nullptr, *fastest = nullptr;
  for (const Record* r : rows) {
    if (plane_of(*r, "image").empty()) continue;
    const std::string m = param(*r, "method"), f = param(*r, "fhd_step"), q = param(*r, "q_step");
    if (m == "gridding" && !gridding) gridding = r;
    if (m == "ls" && f == "cpu-double" && q == "cpu-double") reference = r;
    if (m == "ls" && numbered(f) && numbered(q)) {
      const double t = number_at(r->data, "timing.q_ms").value_or(INFINITY) + number_at(r->data, "timing.fhd_ms").value_or(INFINITY);
      const double best = fastest ? number_at(fastest->data, "timing.q_ms").value_or(INFINITY) +
                                        number_at(fastest->data, "timing.fhd_ms").value_or(INFINITY)
                                  : INFINITY;
      if (t < best) fastest = r;
    }
  }
  const Record* any = reference ? reference : fastest ? fastest : gridding;
  if (!any) return;
  const auto truth = plane_of(*any, "true");
  double top = 0;
  for (const auto& row : truth)
    for (double v : row) top = std::max(top, v);
  std::vector<Panel> panels{{"true image", truth, 0, top}};
  auto label = [](const Record& r, const std::string& what) {
    return what + printf_string(": %.2f %%, ", number_at(r.data, "validation.rel_error_pct").value_or(NAN)) +
           fmt_db(number_at(r.data, "validation.psnr_db")) + " dB";
  };
  if (gridding) panels.push_back({label(*gridding, "gridding"), plane_of(*gridding, "image"), 0, top});
  if (reference) panels.push_back({label(*reference, "LS, CPU double"), plane_of(*reference, "image"), 0, top});
  const Record* shown = fastest ? fastest : reference;
  if (fastest) panels.push_back({label(*fastest, "LS, " + short_step(param(*fastest, "fhd_step")) + "/" +
                                                    short_step(param(*fastest, "q_step"))),
                                 plane_of(*fastest, "image"), 0, top});
  if (shown) {
    auto error = plane_of(*shown, "image");
    for (size_t y = 0; y < error.size() && y < truth.size(); ++y)
      for (size_t x = 0; x < error[y].size() && x < truth[y].size(); ++x) error[y][x] = std::fabs(error[y][x] - truth[y][x]);
    panels.push_back({"|error| of the LS image to its left", error, 0, 0});
  }
  const std::string name = names_("mri-recon-" + slug(any->problem()) + "-montage");
  figures_.push_back(montage(name, "central plane (z = " + text_at(any->data, "slice.z").value_or("?") + ")", panels));
  md_ << "The central plane of each image (grey scale 0 to the true image's peak; the error panel to its own peak):\n\n"
      << "![reconstruction montage](figures/" << name << ".png)\n\n";
}

// Gridding's error against the direct F^H d by kernel width, a line per oversampling; and
// 11_gridding's time against 10's on the same problem where both were measured.
void Writer::gridding_curve(const std::vector<const Record*>& points) {
  std::map<std::string, const Record*> newest;
  for (const Record* r : points)
    keep_newest(newest, r->problem() + "|" + param(*r, "kernel_width") + "|" + param(*r, "oversampling"), *r);
  std::map<double, Series> by_sigma;
  for (const auto& n : newest) {
    const Record& r = *n.second;
    const auto w = number_at(r.data, "params.kernel_width"), s = number_at(r.data, "params.oversampling");
    const auto e = number_at(r.data, "validation.rel_l2");
    if (!w || !s || !e) continue;
    Series& line = by_sigma[*s];
    line.title = "sigma " + printf_string("%g", *s) + " (" + r.problem() + ")";
    line.points.push_back({*w, *e});
  }
  std::vector<Series> series;
  for (auto& [sigma, line] : by_sigma) {
    std::sort(line.points.begin(), line.points.end());
    series.push_back(line);
  }
  if (series.empty()) return;
  const std::string name = names_("mri-gridding-accuracy");
  figures_.push_back(lines(name, "gridding F^H d against the direct sum", {"kernel width W (grid cells)", "relative L2 error", false, true},
                           series));
  md_ << "Gridding's error against the direct F^H d (CPU double) by kernel width, a line per oversampling ("
      << sources_line(points) << "); the accuracy of the fast steps is ~5e-4:\n\n"
      << "![gridding accuracy](figures/" << name << ".png)\n\n";
  // Speed: the ladder's 11_gridding against 10_phase_recurrence, same problem, same GPU.
  std::map<std::string, std::pair<const Record*, const Record*>> pairs;  // problem|device -> (10, 11)
  for (const Record& r : records_) {
    if (r.track() != "mri" || role_of(r) != Role::ladder || !r.gpu() || !r.tag().empty()) continue;
    if (param(r, "kernel") != "fhd" || (r.step() != "10_phase_recurrence" && r.step() != "11_gridding")) continue;
    auto& pr = pairs[r.problem() + "|" + r.device_name()];
    const Record*& slot = r.step() == "10_phase_recurrence" ? pr.first : pr.second;
    if (!slot || r.newer_than(*slot)) slot = &r;
  }
  bool header = false;
  for (const auto& [key, pr] : pairs) {
    if (!pr.first || !pr.second) continue;
    if (!header) {
      md_ << table_row({"problem, GPU", "10_phase_recurrence (ms)", "11_gridding (ms)", "speedup", "11's rel. L2 error"})
          << table_rule(5, 1);
      header = true;
    }
    md_ << table_row({key.substr(0, key.find('|')) + ", " + key.substr(key.find('|') + 1), fmt_ms(pr.first->time_ms()),
                      fmt_ms(pr.second->time_ms()), fmt_speedup(pr.first->time_ms() / pr.second->time_ms()),
                      fmt_sci(number_at(pr.second->data, "validation.rel_l2"))});
  }
  if (header) md_ << "\n";
}

}  // namespace report::sections
