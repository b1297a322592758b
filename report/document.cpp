#include "document.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "format.hpp"
#include "model.hpp"

namespace report {

const char* const kNotRenderedMarker = "> **Plots not rendered:**";

namespace {

// Markdown table cells must not contain a bare '|'.
std::string cell(std::string s) {
  for (size_t i = s.find('|'); i != std::string::npos; i = s.find('|', i + 2)) s.replace(i, 1, "\\|");
  return s;
}

std::string table_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + cell(c) + " |";
  return line + "\n";
}

std::string table_rule(size_t columns, size_t left_aligned) {
  std::string line = "|";
  for (size_t i = 0; i < columns; ++i) line += i < left_aligned ? "---|" : "---:|";
  return line + "\n";
}

// Unique figure names, in the order the document asks for them.
class FigureNames {
 public:
  std::string operator()(const std::string& wanted) {
    std::string name = slug(wanted);
    for (int i = 2; used_.count(name); ++i) name = slug(wanted) + "-" + std::to_string(i);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

std::string problem_label(const Record& r) {
  std::string label = r.problem();
  const json& p = r.data["problem"];
  const auto samples = number_at(p, "params.samples"), voxels = number_at(p, "params.voxels");
  if (samples && voxels)
    label += " (" + printf_string("%.0f", *samples) + " samples x " + printf_string("%.0f", *voxels) + " voxels)";
  return label;
}

// "00, 01 on AMD EPYC (16 threads), commit a4c5db1, 2026-11-21; 02-10 on ..."
std::string sources_line(const std::vector<const Record*>& rows) {
  struct Source {
    std::vector<std::string> steps;
    std::string first_date, last_date;
  };
  std::vector<std::pair<std::string, std::string>> order;  // (where, commit) in row order
  std::map<std::pair<std::string, std::string>, Source> sources;
  for (const Record* r : rows) {
    const auto key = std::make_pair(r->where(), r->commit());
    auto [it, inserted] = sources.emplace(key, Source{});
    if (inserted) order.push_back(key);
    const std::string step = short_step(r->step());  // a peer's modes share one name
    if (it->second.steps.empty() || it->second.steps.back() != step) it->second.steps.push_back(step);
    const std::string d = date_of(r->time());
    if (!d.empty()) {
      if (it->second.first_date.empty() || d < it->second.first_date) it->second.first_date = d;
      if (d > it->second.last_date) it->second.last_date = d;
    }
  }
  std::string line;
  for (const auto& key : order) {
    const Source& s = sources[key];
    if (!line.empty()) line += "; ";
    for (size_t i = 0; i < s.steps.size(); ++i) line += (i ? ", " : "") + s.steps[i];
    line += " on " + key.first + ", commit `" + key.second + "`";
    if (!s.first_date.empty())
      line += ", " + s.first_date + (s.last_date != s.first_date ? " to " + s.last_date : "");
  }
  return line;
}

// "2026-11-21", or "2026-11-21 to 2026-11-22", for records such as a sweep's points.
std::string date_range(const std::vector<const Record*>& rows) {
  std::set<std::string> dates;
  for (const Record* r : rows)
    if (!r->time().empty()) dates.insert(date_of(r->time()));
  if (dates.empty()) return "undated";
  return *dates.begin() + (dates.size() > 1 ? " to " + *dates.rbegin() : "");
}

// How good a record's throughput is, larger is better: a rate as it is, a time per unit of
// work (epic's "ms/gulp") inverted.
double goodness(const Record& r) { return r.lower_is_better() ? 1 / r.throughput() : r.throughput(); }

// Speedup of `r` over `base`: the ratio of throughputs (the same as the ratio of times when
// both did the same work); a time ratio when the throughputs cannot be compared.
double speedup(const Record& base, const Record& r) {
  if (base.unit() == r.unit() && base.throughput() > 0 && r.throughput() > 0) return goodness(r) / goodness(base);
  return base.time_ms() / r.time_ms();
}

std::string title_of(const Record& r) { return text_at(r.data, "title").value_or(""); }

// The images an ae row trained on (problem.params.data.source), as the report names them: real
// data sets by name, the steps' generated shapes and the peer's random pixels as what they are.
std::string images_of(const Record& r) {
  const std::string source = text_at(r.data, "problem.params.data.source").value_or("");
  if (source == "synthetic") return "generated shapes";
  if (source == "fashion-mnist") return "Fashion-MNIST";
  if (source == "cifar-10") return "CIFAR-10";
  if (source == "random-uniform") return "random pixels";
  return source.empty() ? "not recorded" : source;
}

// "Fashion-MNIST", or "generated shapes and random pixels": the images of these rows.
std::string images_of(const std::vector<const Record*>& rows) {
  std::vector<std::string> names;
  for (const Record* r : rows)
    if (std::find(names.begin(), names.end(), images_of(*r)) == names.end()) names.push_back(images_of(*r));
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

bool passed(const Record& r) { return r.data["validation"]["pass"].get<bool>(); }

class Writer {
 public:
  Writer(const std::vector<Record>& records, const Grids& grids, const Parents& parents, const std::string& render_note)
      : records_(records), grids_(grids), parents_(parents), probes_(newest_probes(records)), render_note_(render_note) {}

  Document run(const std::vector<Input>& inputs) {
    header(inputs);
    if (records_.empty()) {
      md_ << "No results recorded yet. Run `./stepwise report` to measure this machine, or commit a\n"
             "results file from the GPU machine under `report/results/`.\n";
      return {md_.str(), std::move(figures_)};
    }
    ceilings();
    summary();
    for (const std::string& track : track_order(records_)) track_section(track);
    return {md_.str(), std::move(figures_)};
  }

 private:
  void header(const std::vector<Input>& inputs) {
    md_ << "# stepwise: measured results\n\n";
    std::map<std::string, size_t> count;
    for (const Record& r : records_) ++count[r.file];
    md_ << "Generated by `stepwise_report` from " << records_.size() << " record"
        << (records_.size() == 1 ? "" : "s") << " in ";
    if (inputs.empty()) md_ << "no results files";
    for (size_t i = 0; i < inputs.size(); ++i)
      md_ << (i ? ", " : "") << "`" << inputs[i].name << "` (" << count[inputs[i].name] << ")";
    md_ << ".\nThe same records always give this same file; `./stepwise report` regenerates it with this\n"
           "machine's runs added.\n\n";
    if (!render_note_.empty()) md_ << kNotRenderedMarker << " " << render_note_ << "\n\n";
    if (records_.empty()) return;
    md_ << "How to read the ladders. *time*: median of the timed runs of the step's compute phase\n"
           "(CUDA events for GPU steps, the host clock for CPU steps); *end-to-end*: the same run with\n"
           "host-device transfers. *step speedup*: over the step's parent (`steps/TRACK/STEP/parent`; \"over NN\"\n"
           "where that is not the row above); *cumulative*: over the first row\n"
           "(both are throughput ratios, equal to time ratios when the rows did the same work).\n"
           "*% of ceiling*: the step's rate of work over the bound that binds it, measured by `stepwise_probe`\n"
           "on the same GPU (each track says which bound; where two apply, the larger fraction binds).\n"
           "*check*: the step's validation against an independent reference (the CPU double-precision\n"
           "computation; for mc, the exact transport solution). When several runs of a row were\n"
           "recorded, the newest is shown; each table says where and at which commit its rows ran.\n\n";
  }

  void ceilings() {
    if (probes_.empty()) return;
    md_ << "## Measured ceilings\n\n"
        << "Measured by `stepwise_probe` on each GPU (the newest probe per device).\n\n";
    md_ << table_row({"device", "SMs", "clock (MHz)", "SFU sin/cos (1/s)", "FP32 (FLOP/s)", "half2 (FLOP/s)", "copy (B/s)",
                      "H2D pinned (B/s)", "mri ceiling (pairs/s)", "TF32 mma.sync (FLOP/s)", "BF16 mma.sync (FLOP/s)",
                      "commit", "date"})
        << table_rule(13, 1);
    for (const auto& [device, probe] : probes_) {
      const json& d = probe->data;
      auto num = [&](const std::string& path) {
        const auto v = number_at(d, path);
        return v ? fmt_si(*v) : std::string("n/a");
      };
      const auto sfu = number_at(d, "ceilings.sfu_per_s");
      md_ << table_row({device, text_at(d, "device.sms").value_or("n/a"), text_at(d, "device.clock_mhz").value_or("n/a"),
                        num("ceilings.sfu_per_s"), num("ceilings.fp32_flop_per_s"), num("ceilings.fp16_flop_per_s"),
                        num("ceilings.copy_bytes_per_s"), num("ceilings.h2d_pinned_bytes_per_s"),
                        sfu ? fmt_si(*sfu / 2) : "n/a", num("ceilings.tf32_tensor_flop_per_s"),
                        num("ceilings.bf16_tensor_flop_per_s"), "`" + probe->commit() + "`", date_of(probe->time())});
    }
    md_ << "\n";
  }

  // The headline: per ladder, from its first row to its fastest passing row.
  void summary() {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& track : track_order(records_)) {
      const Track& info = track_info(track);
      for (const Ladder& l : ladders(records_, track)) {
        const Record& first = *l.rows.front();
        const Record* best = nullptr;
        for (const Record* r : l.rows)
          if (numbered(r->step()) && passed(*r) && (!best || speedup(*best, *r) > 1)) best = r;
        std::string name = track;
        if (!l.variant.empty()) name += " " + info.variant_label(l.variant);
        name += ", " + l.problem + ", " + (l.device.empty() ? std::string("CPU only") : l.device);
        if (!best) {
          rows.push_back({name, "`" + first.step() + "`", "none passed", "", "", "", ""});
          continue;
        }
        rows.push_back({name, "`" + first.step() + "`", "`" + best->step() + "`",
                        fmt_ms(first.time_ms()) + " -> " + fmt_ms(best->time_ms()), fmt_speedup(speedup(first, *best)),
                        fmt_si(best->throughput()) + " " + best->unit(), ceiling_cell(info, *best, probes_)});
      }
    }
    if (rows.empty()) return;
    md_ << "## Summary\n\n"
        << "Each ladder from its first row to its fastest step that passed validation (details below).\n\n"
        << table_row({"ladder", "first", "fastest", "time (ms)", "speedup", "throughput", "% of ceiling"})
        << table_rule(7, 3);
    for (const auto& r : rows) md_ << table_row(r);
    md_ << "\n";
  }

  void track_section(const std::string& track) {
    const Track& info = track_info(track);
    md_ << "## " << track << ": " << info.title << "\n\n";
    if (!info.ceiling_text.empty()) md_ << "Ceiling: " << info.ceiling_text << ".\n\n";
    const auto all = ladders(records_, track);
    for (const Ladder& l : all) ladder(info, l);
    rooflines(info, all);
    scaling(info);
    const auto sweeps = tune_sweeps(records_, track, grids_);
    if (!sweeps.empty()) md_ << "### Tuning sweeps\n\n";
    for (const TuneSweep& s : sweeps) tuning(info, s);
    const auto sizes = size_sweeps(records_, track);
    if (!sizes.empty()) md_ << "### Throughput against problem size\n\n";
    for (const SizeSweep& s : sizes) size_sweep(info, s);
    studies(track);
  }

  // Per GPU, the rows that ran on several GPUs (report/README.md, "Scaling"): a table per
  // variant and problem, and one figure of their speedups under the ideal line.
  void scaling(const Track& info) {
    const auto tables = scaling_tables(records_, info.id, parents_);
    for (size_t i = 0, end = 0; i < tables.size(); i = end) {
      const std::string& device = tables[i].device;
      for (end = i; end < tables.size() && tables[end].device == device;) ++end;
      md_ << "### Scaling: " << device << "\n\n"
          << "Rows that ran on several GPUs, one process per GPU (the record's `ranks.size`), at each GPU count their "
             "newest run. *speedup*: the throughput over the same row's run on one GPU (same step, "
          << (info.variant_key.empty() ? "" : info.variant_key + ", ")
          << "problem and GPU); *efficiency*: speedup / GPUs, 100 % the ideal. *work*: the record's `work.count`, "
             "the work its timed runs counted. A parent row is the step the multi-GPU step grew from "
             "(`steps/TRACK/STEP/parent`), on one GPU, for reference. A peer's rows (`pytorch`) are its "
             "DistributedDataParallel runs.\n\n";
      std::vector<Series> plotted;
      bool without_ranks = false;
      for (size_t k = i; k < end; ++k) scaling_table(info, tables[k], plotted, without_ranks);
      if (without_ranks)
        md_ << "1*: the row's run without `ranks`, a single process (the peer's without DDP): no run under the "
               "launcher on one GPU was recorded, so the speedups are over this one.\n\n";
      if (plotted.empty()) continue;
      const std::string name = names_(info.id + "-" + device + "-scaling");
      figures_.push_back(report::scaling(name, "scaling, " + info.id + ", " + device, plotted));
      md_ << "![scaling, " << info.id << ", " << device << "](figures/" << name << ".png)\n\n";
    }
  }

  void scaling_table(const Track& info, const ScalingTable& t, std::vector<Series>& plotted, bool& without_ranks) {
    std::string heading = info.variant_label(t.variant);
    heading += (heading.empty() ? "" : ", ") + std::string("problem ") + t.problem;
    md_ << "#### " << heading << "\n\n";
    const Record& any = *t.series.front().points.begin()->second;
    const std::string work = text_at(any.data, "work.unit").value_or("");
    md_ << table_row({"row", "GPUs", any.unit().empty() ? "throughput" : any.unit(), "speedup over 1 GPU", "efficiency",
                      work.empty() ? "work" : "work (" + work + ")", "launcher", "commit"})
        << table_rule(8, 1);
    auto commit = [](const Record& r) {
      const std::string date = date_of(r.time());
      return "`" + r.commit() + "`" + (date.empty() ? "" : ", " + date);
    };
    auto count = [](const Record& r) {
      const auto c = number_at(r.data, "work.count");
      return !c ? std::string("-") : *c < 1e6 ? printf_string("%.0f", *c) : fmt_si(*c);
    };
    for (const ScalingSeries& s : t.series) {
      const Record* one = s.single();
      Series line{s.row + ", " + heading, {}};
      for (const auto& [gpus, r] : s.points) {
        const bool alone = gpus == 1 && s.single_without_ranks;
        without_ranks |= alone;
        std::string over = "n/a (no run on 1 GPU)", efficiency = "n/a";
        if (one) {
          const double x = speedup(*one, *r);
          over = fmt_speedup(x);
          efficiency = fmt_percent(x / gpus);
          line.points.push_back({double(gpus), x});
        }
        md_ << table_row({"`" + s.row + "`", std::to_string(gpus) + (alone ? "*" : ""), fmt_si(r->throughput()), over,
                          efficiency, count(*r), alone ? "-" : text_at(r->data, "ranks.launcher").value_or("not recorded"),
                          commit(*r)});
      }
      if (s.parent)
        md_ << table_row({"`" + s.parent->row_name() + "` (parent)", "1", fmt_si(s.parent->throughput()), "-", "-",
                          count(*s.parent), "-", commit(*s.parent)});
      if (line.points.size() > 1) plotted.push_back(std::move(line));
    }
    md_ << "\n";
  }

  // Per GPU with a probe, one ladder's rungs on the roofline: the first ladder of the problem
  // "large" (the published scale), else the first with rows on that GPU.
  void rooflines(const Track& info, const std::vector<Ladder>& all) {
    if (info.roofline_text.empty()) return;
    std::map<std::string, const Ladder*> chosen;  // by device
    for (const Ladder& l : all) {
      if (l.device.empty() || !probes_.count(l.device)) continue;
      const auto it = chosen.find(l.device);
      if (it == chosen.end()) chosen[l.device] = &l;
      else if (it->second->problem != "large" && l.problem == "large") it->second = &l;
    }
    for (const auto& [device, l] : chosen) roofline_of(info, *l);
  }

  // "07", "08 tf32" (a step's second precision), "pytorch tf32_cl".
  static std::string rung_label(const Record& r) {
    if (!numbered(r.step())) return r.row_name();
    return short_step(r.step()) + r.row_name().substr(r.step().size());
  }

  void roofline_of(const Track& info, const Ladder& l) {
    std::string heading = info.variant_label(l.variant);
    heading += (heading.empty() ? "" : ", ") + std::string("problem ") + l.problem + ", " + l.device;
    md_ << "### Roofline: " << heading << "\n\n"
        << "Each GPU row of the table above at its arithmetic intensity (flop over the compulsory DRAM bytes of "
           "its problem: what any implementation reads and writes at the least) and its attained rate (flop over "
           "its kernel time), under the probe's copy bandwidth and its arithmetic rate for the row's precision. "
        << info.roofline_text << ".\n\n";
    std::vector<RooflineMark> marks;
    std::vector<std::pair<double, std::string>> roofs;  // (rate, precision label) of the placed rungs
    double bandwidth = 0;
    size_t compute_bound = 0;
    std::ostringstream table;
    table << table_row({"rung", "precision", "intensity (flop/B)", "attained (flop/s)", "binding ceiling (flop/s)",
                        "% of binding ceiling"})
          << table_rule(6, 2);
    for (const Record* r : l.rows) {
      if (!r->gpu()) continue;
      const RooflinePoint p = roofline_point(info, *r, probes_);
      const std::string label = rung_label(*r);
      if (!p.why_not.empty()) {
        table << table_row({"`" + label + "`", "-", "-", "-", "not placed: " + p.why_not, "-"});
        continue;
      }
      marks.push_back({label, p.flop, p.bytes, p.seconds});
      const std::pair<double, std::string> roof{p.compute, precision_label(p.precision)};
      if (std::find(roofs.begin(), roofs.end(), roof) == roofs.end()) roofs.push_back(roof);
      bandwidth = p.bandwidth;
      compute_bound += !p.memory_bound();
      std::string percent = fmt_percent(p.fraction());
      // Over the roof: the rung does fewer operations than its record counts (mri 10's recurrence).
      if (p.fraction() > 1) percent += " (over the roof: fewer operations than counted)";
      table << table_row({"`" + label + "`", precision_label(p.precision), fmt_si(p.intensity()), fmt_si(p.attained()),
                          (p.memory_bound() ? "DRAM at this intensity " : precision_label(p.precision) + " ") +
                              fmt_si(p.roof()),
                          percent});
    }
    if (marks.empty()) {
      md_ << "No row could be placed:\n\n" << table.str() << "\n";
      return;
    }
    std::sort(roofs.begin(), roofs.end());
    std::vector<Roof> lines;
    md_ << "Ridge points (roof over bandwidth, " << fmt_si(bandwidth) << "B/s): ";
    for (size_t i = 0; i < roofs.size(); ++i) {
      lines.push_back({roofs[i].second + " " + fmt_si(roofs[i].first) + "flop/s", roofs[i].first});
      md_ << (i ? ", " : "") << roofs[i].second << " " << fmt_si(roofs[i].first / bandwidth) << " flop/B";
    }
    md_ << ". " << compute_bound << " of " << marks.size() << (marks.size() == 1 ? " rung lies" : " rungs lie")
        << " right of the ridge of their precision: compute-bound by this count.\n\n";
    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" + l.device + "-roofline");
    figures_.push_back(roofline(name, "roofline, " + l.track + " " + heading, bandwidth,
                                "DRAM (probe copy) " + fmt_si(bandwidth) + "B/s", lines, marks));
    md_ << "![roofline, " << heading << "](figures/" << name << ".png)\n\n" << table.str() << "\n";
  }

  // A track's programs beside its ladder (Role::study): mri's reconstructions (mri_recon) in a
  // quality table and a montage per problem, and gridding's accuracy against its kernel width
  // (mri_gridding_accuracy) with its speed against the exact sum.
  void studies(const std::string& track) {
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
  // each tolerance, with the width it chose, the error it reached and its plan's time.
  void tolerance_table(const std::vector<const Record*>& all) {
    std::map<std::string, std::map<std::string, const Record*>> groups;  // problem|kernel|device -> step|tolerance
    for (const Record* r : all) {
      const double t = *number_at(r->data, "params.tolerance");
      keep_newest(groups[r->problem() + "|" + param(*r, "kernel") + "|" + r->device_name()],
                      r->step() + "|" + printf_string("%08.3f", -std::log10(t)), *r);  // tighter tolerances below
    }
    md_ << "### Gridding by tolerance\n\n"
        << "The adjoint-NUFFT steps at each `--tolerance` they were run with (the ladder above compares them at "
        << printf_string("%g", kLadderTolerance) << "). The kernel width W is the step's choice; the plan (sorting the "
        << "samples into bins) is made once per problem, outside the timed compute, as a NUFFT library's plan is.\n\n";
    for (const auto& [key, rows] : groups) {
      const size_t a = key.find('|'), b = key.find('|', a + 1);
      md_ << "**" << key.substr(0, a) << ", " << (key.substr(a + 1, b - a - 1) == "q" ? "Q" : "F^H d") << ", "
          << key.substr(b + 1) << "**\n\n"
          << table_row({"step", "tolerance", "W", "time (ms)", "plan (ms)", "rel. L2 error", "check"}) << table_rule(7, 1);
      for (const auto& [k, r] : rows) {
        const auto plan = number_at(r->data, "params.plan_ms");
        const auto width = number_at(r->data, "params.kernel_width");
        const auto pass = find_path(r->data, "validation.pass");
        md_ << table_row({"`" + r->step() + "`", printf_string("%g", *number_at(r->data, "params.tolerance")),
                          width ? printf_string("%.0f", *width) : "n/a", fmt_ms(r->time_ms()), plan ? fmt_ms(*plan) : "n/a",
                          fmt_sci(number_at(r->data, "validation.rel_l2")),
                          pass && pass->is_boolean() ? (pass->get<bool>() ? "PASS" : "FAIL") : "n/a"});
      }
      md_ << "\n";
    }
  }

  static std::string param(const Record& r, const std::string& key) { return text_at(r.data, "params." + key).value_or(""); }
  static std::string image_of(const Record& r) {
    const std::string method = param(r, "method");
    if (method == "ls") return "least squares";
    if (method == "gridding") return "gridding (W " + param(r, "kernel_width") + ", sigma " + param(r, "oversampling") + ")";
    return "gridding of w d (W " + param(r, "kernel_width") + ")";
  }
  // Where the CG ran: params.solver (cpu | gpu); records from before the GPU solver ran it on the CPU.
  // Where CG ran, the GPU named: one table holds every device's records of a problem, and a row
  // of one GPU must neither replace nor pass for another's.
  static std::string solver_of(const Record& r) {
    const std::string s = param(r, "solver");
    if (s != "gpu") return s.empty() ? "cpu" : s;
    std::string name = text_at(r.data, "device.name").value_or("");
    if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
    return name.empty() ? s : s + " (" + name + ")";
  }
  static std::vector<std::vector<double>> plane_of(const Record& r, const std::string& which) {
    std::vector<std::vector<double>> rows;
    if (const json* p = find_path(r.data, "slice." + which))
      for (const json& row : *p) {
        rows.emplace_back();
        for (const json& v : row) rows.back().push_back(v.is_number() ? v.get<double>() : NAN);
      }
    return rows;
  }

  // The lecture's quality table: each image against the true image, and where the time went.
  void quality_table(const std::vector<const Record*>& all) {
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
  void montage_of(const std::vector<const Record*>& rows) {
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
  void gridding_curve(const std::vector<const Record*>& points) {
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

  void ladder(const Track& info, const Ladder& l) {
    const Record& first = *l.rows.front();
    std::string heading = info.variant_label(l.variant);
    heading += (heading.empty() ? "" : ", ") + std::string("problem ") + problem_label(first);
    heading += ", " + (l.device.empty() ? std::string("CPU only") : l.device);
    md_ << "### " << heading << "\n\n";
    md_ << "Rows: " << sources_line(l.rows) << ".\n\n";

    bool any_rel = false, any_psnr = false, any_p = false, any_title = false, any_memory = false;
    std::set<std::string> digests;
    for (const Record* r : l.rows) {
      any_rel |= number_at(r->data, "validation.rel_l2").has_value();
      any_psnr |= number_at(r->data, "validation.psnr_db").has_value();
      any_p |= number_at(r->data, "validation.chi2.p_value").has_value();
      any_title |= !title_of(*r).empty();
      any_memory |= number_at(r->data, "memory.peak_bytes").has_value();
      if (auto d = text_at(r->data, "problem.digest")) digests.insert(*d);
    }
    const std::string unit = first.unit();
    // ae: the images each row trained on (a loss is only comparable on the same images).
    bool any_images = false;
    for (const Record* r : l.rows)
      any_images |= l.track == "ae" && text_at(r->data, "problem.params.data.source").has_value();
    std::vector<std::string> head = {"step"};
    if (any_title) head.push_back("what");
    if (any_images) head.push_back("images");
    head.insert(head.end(), {"time (ms)", "end-to-end (ms)", "step speedup", "cumulative", unit.empty() ? "throughput" : unit});
    head.insert(head.end(), {"% of ceiling", "check"});
    if (any_rel) head.push_back("rel. L2 error");
    if (any_psnr) head.push_back("PSNR (dB)");
    if (any_p) head.push_back("p-value");
    if (any_memory) head.push_back("peak memory (MiB)");
    md_ << table_row(head) << table_rule(head.size(), 1 + (any_title ? 1 : 0) + (any_images ? 1 : 0));

    // A row's step speedup is over its parent's first row (its finest precision), so that a
    // step's second precision is compared with the parent, not with its sibling. A step that
    // declares no parent (steps/TRACK/STEP/parent) is compared with the step above it; one whose
    // parent has no row in this table gets none.
    const Record* previous = nullptr;
    const Record* step_first = nullptr;
    std::vector<Bar> bars;
    for (const Record* r : l.rows) {
      const bool ladder_step = numbered(r->step());
      if (ladder_step && (!step_first || step_first->step() != r->step())) previous = step_first, step_first = r;
      const Record* parent = previous;
      std::string over;
      if (const auto declared = parents_.find(l.track + "/" + r->step()); ladder_step && declared != parents_.end()) {
        parent = nullptr;
        for (const Record* p : l.rows)
          if (!declared->second.id.empty() && p->step() == declared->second.id) {
            parent = p;
            break;
          }
        if (parent && parent != previous) over = " (over " + declared->second.id.substr(0, 2) + ")";
      }
      std::vector<std::string> row = {"`" + r->row_name() + "`"};
      if (any_title) row.push_back(title_of(*r));
      if (any_images) row.push_back(images_of(*r));
      const double cumulative = speedup(first, *r);
      row.insert(row.end(), {fmt_ms(r->time_ms()), fmt_ms(r->total_ms()),
                             parent && ladder_step ? fmt_speedup(speedup(*parent, *r)) + over : "-",
                             fmt_speedup(cumulative), fmt_si(r->throughput())});
      row.push_back(ceiling_cell(info, *r, probes_));
      row.push_back(passed(*r) ? "PASS" : "**FAIL**");
      if (any_rel) row.push_back(fmt_sci(number_at(r->data, "validation.rel_l2")));
      if (any_psnr) row.push_back(fmt_db(number_at(r->data, "validation.psnr_db")));
      if (any_p) {
        const auto pv = number_at(r->data, "validation.chi2.p_value");
        row.push_back(pv ? printf_string("%.3g", *pv) : "n/a");
      }
      if (any_memory) {
        const auto bytes = number_at(r->data, "memory.peak_bytes");
        row.push_back(bytes ? printf_string("%.0f", *bytes / (1 << 20)) : r->gpu() ? "not recorded" : "-");
      }
      md_ << table_row(row);
      bars.push_back({r->row_name(), cumulative, r->gpu()});
    }
    md_ << "\n";
    if (any_memory)
      md_ << "Peak memory: a step's own device arrays (`core::DeviceArray`), the most held at once during the timed "
             "runs; a peer's, PyTorch's `max_memory_allocated` (the tensors of its caching allocator). Neither counts "
             "the CUDA context or what libraries allocate for themselves.\n\n";
    sampled_validation_note(l.rows);
    if (digests.size() > 1)
      md_ << "Warning: the rows of this table ran on " << digests.size()
          << " different problem instances of the same name (problem digests differ).\n\n";

    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                    (l.device.empty() ? "cpu" : l.device) + "-speedup");
    figures_.push_back(speedup_bars(name, l.track + " " + heading, first.step(), bars));
    md_ << "![cumulative speedup, " << heading << "](figures/" << name << ".png)\n\n";
    heat_profile_of(l, heading);
    phase_breakdown_of(l);
    loss_curves_of(l, heading);
    reconstructions_of(l, heading);
    sky_of(l, heading);
  }

  // The newest row that recorded reconstructions (record.reconstructions: ae's
  // --record-images): its first images in the top row, the trained model's outputs below.
  void reconstructions_of(const Ladder& l, const std::string& heading) {
    const Record* newest = nullptr;
    for (const Record* r : l.rows)
      if (find_path(r->data, "reconstructions.input") && (!newest || r->newer_than(*newest))) newest = r;
    if (!newest) return;
    const json& g = newest->data["reconstructions"];  // its shape: records.cpp, check_for_report
    auto pictures = [&](const char* key) {
      std::vector<Picture> out;
      for (const json& image : g[key]) {
        Picture p{g["channels"].get<int>(), g["height"].get<int>(), g["width"].get<int>(), {}};
        for (const json& plane : image)
          for (const json& row : plane)
            for (const json& v : row) p.values.push_back(v.get<int>());
        out.push_back(std::move(p));
      }
      return out;
    };
    const int count = g["count"].get<int>();
    const std::string step = newest->row_name();
    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                    (l.device.empty() ? "cpu" : l.device) + "-reconstructions");
    figures_.push_back(image_grid(name, "inputs (top) and reconstructions (bottom): " + step + ", " + heading,
                                  {"input", "output"}, {pictures("input"), pictures("output")}));
    md_ << "The first " << count << (count == 1 ? " image" : " images") << " (top) and `" << step
        << "`'s reconstructions of them after training (below; 8-bit, clipped to the images' range"
        << (text_at(newest->data, "problem.params.data.source") ? "; " + images_of(*newest) : "") << ")";
    if (const auto mse = number_at(g, "mse")) md_ << ": loss (MSE) of these images " << printf_string("%.4g", *mse);
    const json* losses = find_path(newest->data, "training.losses");
    if (losses && losses->is_array() && !losses->empty() && losses->back().is_number())
      md_ << (number_at(g, "mse") ? ", " : ": ") << "last minibatch loss of the training "
          << printf_string("%.4g", losses->back().get<double>());
    md_ << ":\n\n![reconstructions, " << step << ", " << heading << "](figures/" << name << ".png)\n\n";
  }

  // The newest row that recorded its sky (record.sky: epic's --sky): the total intensity over
  // the band with the simulated sources marked where the sky model puts them.
  void sky_of(const Ladder& l, const std::string& heading) {
    const Record* newest = nullptr;
    for (const Record* r : l.rows) {
      const json* sky = find_path(r->data, "sky.intensity");
      if (sky && sky->is_array() && !sky->empty() && (!newest || r->time() > newest->time())) newest = r;
    }
    if (!newest) return;
    std::vector<std::vector<double>> rows;
    for (const json& row : *find_path(newest->data, "sky.intensity")) {
      rows.emplace_back();
      for (const json& v : row) rows.back().push_back(v.is_number() ? v.get<double>() : NAN);
    }
    std::vector<Mark> marks;
    std::string listed;
    if (const json* sources = find_path(newest->data, "sky.sources"))
      for (const json& src : *sources) {
        const std::string label = src.value("name", std::string("?"));
        marks.push_back({label, src.at("pixel").at(0).get<double>(), src.at("pixel").at(1).get<double>()});
        char text[160];
        snprintf(text, sizeof text, "%s%s (l %.3f, m %.3f, %.0f Jy)", listed.empty() ? "" : "; ", label.c_str(),
                 src.value("l", 0.0), src.value("m", 0.0), src.value("flux_jy", 0.0));
        listed += text;
      }
    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                    (l.device.empty() ? "cpu" : l.device) + "-sky");
    figures_.push_back(sky_image(name, "sky, total intensity over the band: " + newest->step() + ", " + heading,
                                 "l (pixel)", "m (pixel)", rows, marks));
    md_ << "The sky as `" << newest->step() << "` imaged it (total intensity summed over the band, scaled to its peak; "
        << "circles: the simulated sources where the sky model puts them" << (listed.empty() ? "" : ": " + listed)
        << "):\n\n"
        << "![sky, " << heading << "](figures/" << name << ".png)\n\n";
  }

  // Rows that time their phases (params.phase_ms_per_gulp, epic's GPU steps): one table, a
  // column per phase, in the order the phases run.
  void phase_breakdown_of(const Ladder& l) {
    static const std::vector<std::string> order = {"copy", "memset", "grid", "fft", "multiply", "reduce", "finish"};
    std::vector<const Record*> rows;
    std::vector<std::string> phases;
    for (const Record* r : l.rows) {
      const json* p = find_path(r->data, "params.phase_ms_per_gulp");
      if (!p || !p->is_object()) continue;
      rows.push_back(r);
      for (const auto& item : p->items())
        if (std::find(phases.begin(), phases.end(), item.key()) == phases.end()) phases.push_back(item.key());
    }
    if (rows.empty()) return;
    auto rank = [&](const std::string& ph) { return std::find(order.begin(), order.end(), ph) - order.begin(); };
    std::stable_sort(phases.begin(), phases.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    md_ << "Time per phase (ms per gulp, CUDA events around each phase; a phase on a stream of its own "
           "overlaps the others, so the sum can exceed the time measured):\n\n| step |";
    for (const auto& ph : phases) md_ << " " << ph << " |";
    md_ << " sum | measured per gulp |\n|---|";
    for (size_t i = 0; i <= phases.size() + 1; ++i) md_ << "---:|";
    md_ << "\n";
    for (const Record* r : rows) {
      const json& p = *find_path(r->data, "params.phase_ms_per_gulp");
      double sum = 0;
      md_ << "| `" << r->row_name() << "` |";
      for (const auto& ph : phases) {
        if (p.contains(ph) && p[ph].is_number()) {
          sum += p[ph].get<double>();
          md_ << " " << fmt_ms(p[ph].get<double>()) << " |";
        } else {
          md_ << " - |";
        }
      }
      // The record's rate is ms per gulp where the phases are (epic); otherwise its kernel time.
      md_ << " " << fmt_ms(sum) << " | " << fmt_ms(r->lower_is_better() ? r->throughput() : r->time_ms()) << " |\n";
    }
    md_ << "\n";
  }

  // Rows that record their training loss (training.losses, one value every training.every
  // steps: the ae track): one curve per row.
  void loss_curves_of(const Ladder& l, const std::string& heading) {
    // Losses on different images are not comparable: each curve then names its images.
    std::set<std::string> sources;
    for (const Record* r : l.rows)
      if (find_path(r->data, "training.losses")) sources.insert(text_at(r->data, "problem.params.data.source").value_or("?"));
    std::vector<Series> series;
    for (const Record* r : l.rows) {
      const json* losses = find_path(r->data, "training.losses");
      if (!losses || !losses->is_array() || losses->empty()) continue;
      const double every = number_at(r->data, "training.every").value_or(1);
      Series line{r->row_name(), {}};
      if (sources.size() > 1) line.title += " (" + text_at(r->data, "problem.params.data.source").value_or("?") + " images)";
      for (size_t i = 0; i < losses->size(); ++i)
        if ((*losses)[i].is_number()) line.points.push_back({(i + 1) * every, (*losses)[i].get<double>()});
      series.push_back(std::move(line));
    }
    if (series.empty()) return;
    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                    (l.device.empty() ? "cpu" : l.device) + "-loss");
    figures_.push_back(lines(name, "training loss, " + heading, {"training step", "minibatch loss (MSE)", false, true}, series));
    std::vector<const Record*> curves;
    for (const Record* r : l.rows)
      if (find_path(r->data, "training.losses")) curves.push_back(r);
    const bool named = std::any_of(curves.begin(), curves.end(), [](const Record* r) {
      return text_at(r->data, "problem.params.data.source").has_value();
    });
    md_ << "Training loss of each row, one value a training step" << (named ? ", on " + images_of(curves) : "")
        << (sources.size() > 1 ? " (the rows trained on different images, so only the shapes of their curves compare)" : "")
        << ":\n\n"
        << "![training loss, " << heading << "](figures/" << name << ".png)\n\n";
  }

  // Large problems are validated on a seeded sample of outputs; the table says so.
  void sampled_validation_note(const std::vector<const Record*>& rows) {
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

  void heat_profile_of(const Ladder& l, const std::string& heading) {
    const Record* with_profile = nullptr;
    for (const Record* r : l.rows)
      if (r->data.contains("profile")) with_profile = r;
    if (!with_profile) return;
    const json& p = with_profile->data["profile"];
    auto column = [&](const char* key) {
      return p.contains(key) ? p[key].get<std::vector<double>>() : std::vector<double>();
    };
    Profile profile{column("r_mm"), column("heat"), column("stderr"), column("exact")};
    const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                    (l.device.empty() ? "cpu" : l.device) + "-heat-profile");
    const std::string step = with_profile->step();
    figures_.push_back(heat_profile(name, "heat profile, " + step + ", " + heading, profile));
    md_ << "Heat profile of `" << step << "` against the exact transport solution:\n\n"
        << "![heat profile, " << step << "](figures/" << name << ".png)\n\n";
  }

  // The passing point of highest throughput among `points`.
  static const Record* best_of(const std::vector<const Record*>& points) {
    const Record* best = nullptr;
    for (const Record* r : points)
      if (passed(*r) && (!best || goodness(*r) > goodness(*best))) best = r;
    return best;
  }

  static std::string axis_text(const Record& r, const std::string& axis) {
    return text_at(r.data, "params." + axis).value_or("-");
  }

  void tuning(const Track& info, const TuneSweep& s) {
    std::string heading = s.step;  // plain text: it titles the figures too
    if (!s.variant.empty()) heading += ", " + info.variant_label(s.variant);
    heading += ", problem " + s.problem + ", " + s.where + ", commit " + s.commit;
    md_ << "#### " << heading << "\n\n";
    size_t failed = 0;
    for (const Record* r : s.points) failed += !passed(*r);
    md_ << s.points.size() << (s.points.size() == 1 ? " point" : " points");
    if (!s.axes.empty()) {
      md_ << " over ";
      for (size_t i = 0; i < s.axes.size(); ++i) md_ << (i ? " x " : "") << s.axes[i];
    }
    md_ << " (" << date_range(s.points) << ")";
    if (failed) md_ << "; " << (failed == 1 ? "1 point" : std::to_string(failed) + " points")
                    << " failed validation (left out)";
    md_ << ".\n\n";

    const Record* best = best_of(s.points);
    if (best) {
      md_ << "Best point: ";
      for (size_t i = 0; i < s.axes.size(); ++i) md_ << (i ? ", " : "") << s.axes[i] << " " << axis_text(*best, s.axes[i]);
      md_ << (s.axes.empty() ? "" : ": ") << fmt_ms(best->time_ms()) << " ms, " << fmt_si(best->throughput()) << " "
          << best->unit();
      if (const auto f = ceiling_fraction(info, *best, probes_)) md_ << " (" << fmt_percent(*f) << " of the ceiling)";
      md_ << ".\n\n";
    }
    // A superseded version's figures would sit beside the current ones as if they still
    // described the step; its records stay in the results, and this summary names them.
    if (!s.superseded_by.empty()) {
      md_ << "Superseded by the sweep of commit " << s.superseded_by << " above: not drawn.\n\n";
      return;
    }

    std::vector<std::string> map_axes = s.axes;
    const bool chunk_lines = info.id == "mri" && std::count(s.axes.begin(), s.axes.end(), "chunk") && s.axes.size() >= 2;
    if (chunk_lines && map_axes.size() >= 3) map_axes.erase(std::find(map_axes.begin(), map_axes.end(), "chunk"));
    const std::string base = s.track + "-" + s.step + "-" + s.variant + "-" + s.problem + "-" + s.where + "-" + s.commit;
    if (map_axes.size() == 1) {
      one_axis(s, map_axes[0], heading, base);
    } else {
      for (size_t i = 0; i < map_axes.size(); ++i)
        for (size_t j = i + 1; j < map_axes.size(); ++j) two_axes(s, map_axes[i], map_axes[j], heading, base);
    }
    if (chunk_lines) samples_per_launch(s, heading, base);
  }

  // Distinct values of an axis, numerically sorted, as the records spell them.
  static std::vector<std::string> axis_values(const TuneSweep& s, const std::string& axis) {
    std::map<double, std::string> values;
    for (const Record* r : s.points)
      if (auto v = number_at(r->data, "params." + axis)) values.emplace(*v, axis_text(*r, axis));
    std::vector<std::string> out;
    for (const auto& v : values) out.push_back(v.second);
    return out;
  }

  void one_axis(const TuneSweep& s, const std::string& axis, const std::string& heading, const std::string& base) {
    Series series{s.step, {}};
    md_ << table_row({axis, s.points.front()->unit(), "time (ms)"}) << table_rule(3, 1);
    for (const std::string& v : axis_values(s, axis)) {
      std::vector<const Record*> at;
      for (const Record* r : s.points)
        if (axis_text(*r, axis) == v) at.push_back(r);
      const Record* b = best_of(at);
      md_ << table_row({v, b ? fmt_si(b->throughput()) : "FAIL", b ? fmt_ms(b->time_ms()) : "-"});
      if (b) series.points.push_back({std::strtod(v.c_str(), nullptr), b->throughput()});
    }
    md_ << "\n";
    const std::string name = names_(base + "-" + axis);
    figures_.push_back(lines(name, "tuning " + heading, {axis, s.points.front()->unit(), true, false, 2}, {series}));
    md_ << "![tuning " << axis << "](figures/" << name << ".png)\n\n";
  }

  void two_axes(const TuneSweep& s, const std::string& x, const std::string& y, const std::string& heading,
                const std::string& base) {
    const auto xs = axis_values(s, x), ys = axis_values(s, y);
    const std::string unit = s.points.front()->unit();
    const Record* overall = best_of(s.points);
    std::vector<Cell> cells;
    md_ << "Best " << unit << " for each " << y << " (rows) and " << x << " (columns)";
    if (s.axes.size() > 2) md_ << ", over the other parameters";
    md_ << "; the best point in bold:\n\n";
    std::vector<std::string> head = {y + " \\ " + x};
    head.insert(head.end(), xs.begin(), xs.end());
    md_ << table_row(head) << table_rule(head.size(), 1);
    for (size_t yi = 0; yi < ys.size(); ++yi) {
      std::vector<std::string> row = {ys[yi]};
      for (size_t xi = 0; xi < xs.size(); ++xi) {
        std::vector<const Record*> at;
        for (const Record* r : s.points)
          if (axis_text(*r, x) == xs[xi] && axis_text(*r, y) == ys[yi]) at.push_back(r);
        const Record* b = best_of(at);
        if (!b) {
          row.push_back(at.empty() ? "" : "FAIL");
          continue;
        }
        const bool is_best = overall && axis_text(*b, x) == axis_text(*overall, x) && axis_text(*b, y) == axis_text(*overall, y);
        row.push_back(is_best ? "**" + fmt_si(b->throughput()) + "**" : fmt_si(b->throughput()));
        cells.push_back({xi, yi, b->throughput(), fmt_si(b->throughput()) + (is_best ? " *" : "")});
      }
      md_ << table_row(row);
    }
    md_ << "\n";
    const std::string name = names_(base + "-" + x + "-" + y);
    figures_.push_back(heat_map(name, "tuning " + heading, x, xs, y, ys, unit + " (best over other parameters)", cells));
    md_ << "![tuning heat map, " << x << " x " << y << "](figures/" << name << ".png)\n\n";
  }

  // The lecture's figure: kernel time against samples per launch, one line per block size.
  void samples_per_launch(const TuneSweep& s, const std::string& heading, const std::string& base) {
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

  void size_sweep(const Track& info, const SizeSweep& s) {
    const Record* any = s.series.begin()->second.begin()->second;
    const std::string unit = any->unit();
    const std::string work = text_at(any->data, "work.unit").value_or("work items");
    if (!s.variant.empty()) md_ << "#### " << info.variant_label(s.variant) << "\n\n";
    std::set<double> counts;
    for (const auto& [label, points] : s.series)
      for (const auto& p : points) counts.insert(p.first);
    std::vector<std::string> head = {work};
    for (const auto& [label, points] : s.series) head.push_back(label);
    md_ << unit << " by " << work << " per run:\n\n" << table_row(head) << table_rule(head.size(), 1);
    for (double c : counts) {
      std::vector<std::string> row = {printf_string("%.0f", c)};
      for (const auto& [label, points] : s.series) {
        const auto it = points.find(c);
        row.push_back(it == points.end() ? "" : fmt_si(it->second->throughput()) + (passed(*it->second) ? "" : " (FAIL)"));
      }
      md_ << table_row(row);
    }
    md_ << "\n";
    std::vector<Series> series;
    for (const auto& [label, points] : s.series) {
      Series line{label, {}};
      for (const auto& [count, r] : points) line.points.push_back({count, r->throughput()});
      series.push_back(std::move(line));
    }
    const std::string name = names_(s.track + "-" + s.variant + "-sizes");
    figures_.push_back(lines(name, s.track + " " + unit + " against " + work, {work + " (log scale)", unit + " (log scale)", true, true, 10}, series));
    md_ << "![" << unit << " against " << work << "](figures/" << name << ".png)\n\n";
  }

  const std::vector<Record>& records_;
  const Grids& grids_;
  const Parents& parents_;
  const Probes probes_;
  const std::string render_note_;
  std::ostringstream md_;
  std::vector<Figure> figures_;
  FigureNames names_;
};

}  // namespace

Document build_document(const std::vector<Record>& records, const std::vector<Input>& inputs,
                        const Grids& grids, const Parents& parents, const std::string& render_note) {
  return Writer(records, grids, parents, render_note).run(inputs);
}

}  // namespace report
