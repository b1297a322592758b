// epic's sections beside its ladder: the time of each phase of a gulp, and the imaged sky.
#include "document_sections.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace report::sections {

// Rows that time their phases (params.phase_ms_per_gulp, epic's GPU steps): one table, a
// column per phase, in the order the phases run.
void Writer::phase_breakdown_of(const Ladder& l) {
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
    md_ << "| " << cell(row_md(l, *r)) << " |";
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

// The newest row that recorded its sky (record.sky: epic's --sky): the total intensity over
// the band with the simulated sources marked where the sky model puts them.
void Writer::sky_of(const Ladder& l, const std::string& heading) {
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
  const std::string machine = l.machine_of(*newest);
  const std::string step = newest->step() + (machine.empty() ? "" : " on " + machine);
  figures_.push_back(sky_image(name, "sky, total intensity over the band: " + step + ", " + heading,
                               "l (pixel)", "m (pixel)", rows, marks));
  md_ << "The sky as `" << newest->step() << "`" << (machine.empty() ? "" : " on " + machine) << " imaged it (total intensity summed over the band, scaled to its peak; "
      << "circles: the simulated sources where the sky model puts them" << (listed.empty() ? "" : ": " + listed)
      << "):\n\n"
      << "![sky, " << heading << "](figures/" << name << ".png)\n\n";
}

}  // namespace report::sections
