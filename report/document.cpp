// The sections every track has: the measured ceilings, the summary, and per track its ladders,
// rooflines, scaling over GPUs, tuning and size sweeps. What only one track has is in
// document_mri.cpp, document_mc.cpp, document_epic.cpp and document_ae.cpp.
#include "document.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "document_sections.hpp"
#include "format.hpp"
#include "model.hpp"

namespace report {

const char* const kNotRenderedMarker = "> **Plots not rendered:**";

namespace sections {

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

Entry explained(const std::string& text) {
  const size_t open = text.find(" (");
  if (open == std::string::npos || text.back() != ')') return text;
  const std::string value = text.substr(0, open), note = text.substr(open + 2, text.size() - open - 3);
  const bool number = value.find_first_of("0123456789") != std::string::npos;
  return {text, value, number ? note : value + ": " + note};
}

std::string Table::str() const {
  std::map<std::string, size_t> uses;
  std::set<std::string> always;
  for (const auto& row : rows_)
    for (const Entry& e : row)
      if (!e.footnote.empty()) {
        ++uses[e.footnote];
        if (e.always) always.insert(e.footnote);
      }
  // "[a]", "[b]", ...: a mark per footnote, in the order the rows first use them.
  std::vector<std::string> notes;
  auto mark = [](size_t i) {
    return "[" + std::string(1, char('a' + i % 26)) + (i < 26 ? "" : std::to_string(i / 26)) + "]";
  };
  std::string out = head_;
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (const Entry& e : row) {
      if (e.footnote.empty() || (uses[e.footnote] < 2 && !always.count(e.footnote))) {
        cells.push_back(e.text);
        continue;
      }
      auto it = std::find(notes.begin(), notes.end(), e.footnote);
      if (it == notes.end()) it = notes.insert(notes.end(), e.footnote);
      cells.push_back(e.value + " " + mark(it - notes.begin()));
    }
    out += table_row(cells);
  }
  out += "\n";
  for (size_t i = 0; i < notes.size(); ++i) out += mark(i) + " " + notes[i] + ".\n\n";
  return out;
}

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

std::string date_range(const std::vector<const Record*>& rows) {
  std::set<std::string> dates;
  for (const Record* r : rows)
    if (!r->time().empty()) dates.insert(date_of(r->time()));
  if (dates.empty()) return "undated";
  return *dates.begin() + (dates.size() > 1 ? " to " + *dates.rbegin() : "");
}

double goodness(const Record& r) { return r.lower_is_better() ? 1 / r.throughput() : r.throughput(); }

double speedup(const Record& base, const Record& r) {
  if (base.unit() == r.unit() && base.throughput() > 0 && r.throughput() > 0) return goodness(r) / goodness(base);
  return base.time_ms() / r.time_ms();
}

std::string title_of(const Record& r) { return text_at(r.data, "title").value_or(""); }

bool passed(const Record& r) { return r.data["validation"]["pass"].get<bool>(); }

const Record* best_of(const std::vector<const Record*>& points) {
  const Record* best = nullptr;
  for (const Record* r : points)
    if (passed(*r) && (!best || goodness(*r) > goodness(*best))) best = r;
  return best;
}

std::string axis_text(const Record& r, const std::string& axis) {
  return text_at(r.data, "params." + axis).value_or("-");
}

std::vector<std::string> axis_values(const TuneSweep& s, const std::string& axis) {
  std::map<double, std::string> values;
  for (const Record* r : s.points)
    if (auto v = number_at(r->data, "params." + axis)) values.emplace(*v, axis_text(*r, axis));
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.second);
  return out;
}

std::string row_md(const Ladder& l, const Record& r) {
  const std::string machine = l.machine_of(r);
  return "`" + r.row_name() + "`" + (machine.empty() ? "" : " on " + machine);
}

namespace {

// "07", "08 tf32" (a step's second precision), "pytorch tf32_cl".
std::string rung_label(const Record& r) {
  if (!numbered(r.step())) return r.row_name();
  return short_step(r.step()) + r.row_name().substr(r.step().size());
}

// A row's "% of ceiling" cell. Why there is no fraction ("n/a (CPU)") and why a fraction over
// 1 does not bind are explanations; the bound a fraction names ("17.9 % (FFT flops)") is part
// of its value. A fraction over 1 is always marked, its note under the table: "219.8 %" on its
// own reads as a step faster than its ceiling, and the explanation in the cell would widen the
// column past the rest of the table.
Entry ceiling_entry(const Track& info, const Record& r, const Probes& probes) {
  const std::optional<double> fraction = ceiling_fraction(info, r, probes);
  const std::string text = ceiling_cell(info, r, probes);
  if (fraction && *fraction <= 1) return Entry(text);
  Entry e = explained(text);
  e.always = fraction.has_value();
  return e;
}

}  // namespace

Document Writer::run(const std::vector<Input>& inputs) {
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

void Writer::header(const std::vector<Input>& inputs) {
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

void Writer::ceilings() {
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
void Writer::summary() {
  Table table({"ladder", "first", "fastest", "time (ms)", "speedup", "throughput", "% of ceiling"}, 3);
  for (const std::string& track : track_order(records_)) {
    const Track& info = track_info(track);
    for (const Ladder& l : ladders(records_, track)) {
      // The ladder's own rows: another machine's (a CPU-only machine's run beside it) is neither
      // its start nor its fastest step.
      std::vector<const Record*> own;
      for (const Record* r : l.rows)
        if (l.machine_of(*r).empty()) own.push_back(r);
      if (own.empty()) continue;
      const Record& first = *own.front();
      const Record* best = nullptr;
      for (const Record* r : own)
        if (numbered(r->step()) && passed(*r) && (!best || speedup(*best, *r) > 1)) best = r;
      std::string name = track;
      if (!l.variant.empty()) name += " " + info.variant_label(l.variant);
      name += ", " + l.problem + ", " + (l.device.empty() ? std::string("CPU only") : l.device);
      if (!best) {
        table.add({name, "`" + first.step() + "`", "none passed", "", "", "", ""});
        continue;
      }
      const std::string unit = (equivalent_rate(*best) ? "equivalent " : "") + best->unit();
      table.add({name, "`" + first.step() + "`", "`" + best->step() + "`",
                 fmt_ms(first.time_ms()) + " -> " + fmt_ms(best->time_ms()), fmt_speedup(speedup(first, *best)),
                 fmt_si(best->throughput()) + " " + unit, ceiling_entry(info, *best, probes_)});
    }
  }
  if (table.empty()) return;
  md_ << "## Summary\n\n"
      << "Each ladder from its first row to its fastest step that passed validation (details below).\n\n"
      << table.str();
}

void Writer::track_section(const std::string& track) {
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
void Writer::scaling(const Track& info) {
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

void Writer::scaling_table(const Track& info, const ScalingTable& t, std::vector<Series>& plotted, bool& without_ranks) {
  std::string heading = info.variant_label(t.variant);
  heading += (heading.empty() ? "" : ", ") + std::string("problem ") + t.problem;
  md_ << "#### " << heading << "\n\n";
  const Record& any = *t.series.front().points.begin()->second;
  const std::string work = text_at(any.data, "work.unit").value_or("");
  Table table({"row", "GPUs", any.unit().empty() ? "throughput" : any.unit(), "speedup over 1 GPU", "efficiency",
               work.empty() ? "work" : "work (" + work + ")", "launcher", "commit"},
              1);
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
      table.add({"`" + s.row + "`", std::to_string(gpus) + (alone ? "*" : ""), throughput_entry(*r), explained(over),
                 efficiency, count(*r), alone ? "-" : text_at(r->data, "ranks.launcher").value_or("not recorded"),
                 commit(*r)});
    }
    if (s.parent)
      table.add({"`" + s.parent->row_name() + "` (parent)", "1", throughput_entry(*s.parent), "-", "-",
                 count(*s.parent), "-", commit(*s.parent)});
    if (line.points.size() > 1) plotted.push_back(std::move(line));
  }
  md_ << table.str();
}

// Per GPU with a probe, one ladder's rungs on the roofline: the first ladder of the problem
// "large" (the published scale), else the first with rows on that GPU.
void Writer::rooflines(const Track& info, const std::vector<Ladder>& all) {
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

void Writer::roofline_of(const Track& info, const Ladder& l) {
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
  Table table({"rung", "precision", "intensity (flop/B)", "attained (flop/s)", "binding ceiling (flop/s)",
               "% of binding ceiling"},
              2);
  for (const Record* r : l.rows) {
    if (!r->gpu()) continue;
    const RooflinePoint p = roofline_point(info, *r, probes_);
    const std::string label = rung_label(*r);
    if (!p.why_not.empty()) {
      const std::string why = "not placed: " + p.why_not;
      table.add({"`" + label + "`", "-", "-", "-", Entry(why, "not placed", why), "-"});
      continue;
    }
    marks.push_back({label, p.flop, p.bytes, p.seconds});
    const std::pair<double, std::string> roof{p.compute, precision_label(p.precision)};
    if (std::find(roofs.begin(), roofs.end(), roof) == roofs.end()) roofs.push_back(roof);
    bandwidth = p.bandwidth;
    compute_bound += !p.memory_bound();
    std::string percent = fmt_percent(p.fraction());
    // Over the roof: the rung does fewer operations than its record counts (mri 10's recurrence);
    // marked, with the note under the table, as in the ladders.
    Entry fraction = percent;
    if (p.fraction() > 1) fraction = Entry(percent + " (over the roof: fewer operations than counted)", percent,
                                           "over the roof: fewer operations than counted", true);
    table.add({"`" + label + "`", precision_label(p.precision), fmt_si(p.intensity()), fmt_si(p.attained()),
               (p.memory_bound() ? "DRAM at this intensity " : precision_label(p.precision) + " ") + fmt_si(p.roof()),
               fraction});
  }
  if (marks.empty()) {
    md_ << "No row could be placed:\n\n" << table.str();
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
  md_ << "![roofline, " << heading << "](figures/" << name << ".png)\n\n" << table.str();
}

void Writer::ladder(const Track& info, const Ladder& l) {
  // The first of the table's own rows: another machine's row is beside the ladder, not its start.
  const Record* own_first = l.rows.front();
  for (const Record* r : l.rows)
    if (l.machine_of(*r).empty()) {
      own_first = r;
      break;
    }
  const Record& first = *own_first;
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
  Table table(head, 1 + (any_title ? 1 : 0) + (any_images ? 1 : 0));

  // A row's step speedup is over its parent's first row (its finest precision), so that a
  // step's second precision is compared with the parent, not with its sibling. A step that
  // declares no parent (steps/TRACK/STEP/parent) is compared with the step above it; one whose
  // parent has no row in this table gets none. Each machine's rows climb their own ladder:
  // another machine's row is compared with that machine's parent row, its cumulative speedup
  // with the table's first row.
  struct Climb {
    const Record* previous = nullptr;
    const Record* step_first = nullptr;
  };
  std::map<std::string, Climb> climbs;  // by machine, "" the table's own
  std::vector<Bar> bars;
  for (const Record* r : l.rows) {
    const bool ladder_step = numbered(r->step());
    const std::string machine = l.machine_of(*r);
    Climb& climb = climbs[machine];
    if (ladder_step && (!climb.step_first || climb.step_first->step() != r->step()))
      climb.previous = climb.step_first, climb.step_first = r;
    const Record* parent = climb.previous;
    std::string over;
    if (const auto declared = parents_.find(l.track + "/" + r->step()); ladder_step && declared != parents_.end()) {
      parent = nullptr;
      for (const Record* p : l.rows)
        if (!declared->second.id.empty() && p->step() == declared->second.id && l.machine_of(*p) == machine) {
          parent = p;
          break;
        }
      if (parent && parent != climb.previous) over = " (over " + declared->second.id.substr(0, 2) + ")";
    }
    std::vector<Entry> row = {row_md(l, *r)};
    if (any_title) row.push_back(title_of(*r));
    if (any_images) row.push_back(images_of(*r));
    const double cumulative = speedup(first, *r);
    row.insert(row.end(), {fmt_ms(r->time_ms()), fmt_ms(r->total_ms()),
                           parent && ladder_step ? fmt_speedup(speedup(*parent, *r)) + over : "-",
                           fmt_speedup(cumulative), throughput_entry(*r)});
    row.push_back(ceiling_entry(info, *r, probes_));
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
    table.add(row);
    bars.push_back({l.label(*r), cumulative, r->gpu()});
  }
  md_ << table.str();
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

void Writer::tuning(const Track& info, const TuneSweep& s) {
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

void Writer::one_axis(const TuneSweep& s, const std::string& axis, const std::string& heading, const std::string& base) {
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

void Writer::two_axes(const TuneSweep& s, const std::string& x, const std::string& y, const std::string& heading,
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

void Writer::size_sweep(const Track& info, const SizeSweep& s) {
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

}  // namespace sections

Document build_document(const std::vector<Record>& records, const std::vector<Input>& inputs,
                        const Grids& grids, const Parents& parents, const std::string& render_note) {
  return sections::Writer(records, grids, parents, render_note).run(inputs);
}

}  // namespace report
