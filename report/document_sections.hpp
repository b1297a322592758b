// What the sections of REPORT.md share: markdown tables, with footnotes for the explanations
// their cells repeat, and the Writer that writes the sections in order. The sections of every
// track are in document.cpp; a track's own (its studies, its figures beside the ladder) are in
// document_mri.cpp, document_mc.cpp, document_epic.cpp and document_ae.cpp.
#pragma once
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "document.hpp"
#include "figures.hpp"
#include "format.hpp"
#include "model.hpp"
#include "records.hpp"

namespace report::sections {

// Markdown table cells must not contain a bare '|'.
std::string cell(std::string s);
std::string table_row(const std::vector<std::string>& cells);
std::string table_rule(size_t columns, size_t left_aligned);

// A table cell and what explains it. The explanation stays in the cell ("n/a (CPU)") where the
// table says it once; where several cells say it, each shows its value and a mark ("n/a [a]")
// and the table says it once, under it ("[a] n/a: CPU."). A note that labels a value's unit
// ("equivalent pairs/s") is a footnote however often it occurs, so that the cell's number
// never reads in the column's unit.
struct Entry {
  std::string text;      // the cell on its own: "n/a (CPU)"
  std::string value;     // the cell beside a mark: "n/a"
  std::string footnote;  // the explanation under the table: "n/a: CPU"; "" = a plain cell
  bool always = false;   // a footnote even where it is the table's only one
  Entry(std::string plain) : text(plain), value(std::move(plain)) {}
  Entry(const char* plain) : Entry(std::string(plain)) {}
  Entry(std::string text, std::string value, std::string footnote, bool always = false)
      : text(std::move(text)), value(std::move(value)), footnote(std::move(footnote)), always(always) {}
};
// "n/a (CPU)": value "n/a", footnote "n/a: CPU"; "221.1 % (over the ... bound: ...)": value
// "221.1 %", footnote "over the ... bound: ..." (a number's footnote leaves it out: it differs
// from row to row). A text that does not end in a parenthesis is a plain cell.
Entry explained(const std::string& text);

// A table whose footnotes follow it: head and rule, the rows, a blank line, then a paragraph
// per footnote in the order of its first mark.
class Table {
 public:
  Table(const std::vector<std::string>& head, size_t left_aligned)
      : head_(table_row(head) + table_rule(head.size(), left_aligned)) {}
  void add(const std::vector<Entry>& row) { rows_.push_back(row); }
  bool empty() const { return rows_.empty(); }
  std::string str() const;

 private:
  std::string head_;
  std::vector<std::vector<Entry>> rows_;
};

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

// "00, 01 on AMD EPYC (16 threads), commit a4c5db1, 2026-11-21; 02-10 on ..."
std::string sources_line(const std::vector<const Record*>& rows);
// "2026-11-21", or "2026-11-21 to 2026-11-22", for records such as a sweep's points.
std::string date_range(const std::vector<const Record*>& rows);
// How good a record's throughput is, larger is better: a rate as it is, a time per unit of
// work (epic's "ms/gulp") inverted.
double goodness(const Record& r);
// Speedup of `r` over `base`: the ratio of throughputs (the same as the ratio of times when
// both did the same work); a time ratio when the throughputs cannot be compared.
double speedup(const Record& base, const Record& r);
std::string title_of(const Record& r);
bool passed(const Record& r);
// The passing point of highest throughput among `points`.
const Record* best_of(const std::vector<const Record*>& points);
std::string axis_text(const Record& r, const std::string& axis);
// Distinct values of an axis, numerically sorted, as the records spell them.
std::vector<std::string> axis_values(const TuneSweep& s, const std::string& axis);

// A ladder row as the text names it: "`01_cpu_omp`", "`01_cpu_omp` on AMD Ryzen 7 7840U (8 threads)"
// for another machine's row (Ladder::guests).
std::string row_md(const Ladder& l, const Record& r);

// mri (document_mri.cpp). A ladder's problem with its size: "small (32768 samples x 32768 voxels)".
std::string problem_label(const Record& r);
// Whether a row's throughput is an equivalent rate: mri's gridding rungs compute no voxel-sample
// pair, and their pairs/s is the direct sum's pairs over their time.
bool equivalent_rate(const Record& r);
// The throughput cell of a ladder row, its equivalent rate marked as such.
Entry throughput_entry(const Record& r);

// ae (document_ae.cpp). The images a row trained on, as the report names them.
std::string images_of(const Record& r);
// "Fashion-MNIST", or "generated shapes and random pixels": the images of these rows.
std::string images_of(const std::vector<const Record*>& rows);

class Writer {
 public:
  Writer(const std::vector<Record>& records, const Grids& grids, const Parents& parents, const std::string& render_note)
      : records_(records), grids_(grids), parents_(parents), probes_(newest_probes(records)), render_note_(render_note) {}

  Document run(const std::vector<Input>& inputs);

 private:
  // Every track's sections (document.cpp).
  void header(const std::vector<Input>& inputs);
  void ceilings();
  void summary();
  void track_section(const std::string& track);
  void scaling(const Track& info);
  void scaling_table(const Track& info, const ScalingTable& t, std::vector<Series>& plotted, bool& without_ranks);
  void rooflines(const Track& info, const std::vector<Ladder>& all);
  void roofline_of(const Track& info, const Ladder& l);
  void ladder(const Track& info, const Ladder& l);
  void tuning(const Track& info, const TuneSweep& s);
  void one_axis(const TuneSweep& s, const std::string& axis, const std::string& heading, const std::string& base);
  void two_axes(const TuneSweep& s, const std::string& x, const std::string& y, const std::string& heading,
                const std::string& base);
  void size_sweep(const Track& info, const SizeSweep& s);

  // mri (document_mri.cpp).
  void sampled_validation_note(const std::vector<const Record*>& rows);
  void samples_per_launch(const TuneSweep& s, const std::string& heading, const std::string& base);
  void studies(const std::string& track);
  void tolerance_table(const std::vector<const Record*>& all);
  void quality_table(const std::vector<const Record*>& all);
  void montage_of(const std::vector<const Record*>& rows);
  void gridding_curve(const std::vector<const Record*>& points);

  // mc (document_mc.cpp).
  void heat_profile_of(const Ladder& l, const std::string& heading);

  // epic (document_epic.cpp).
  void phase_breakdown_of(const Ladder& l);
  void sky_of(const Ladder& l, const std::string& heading);

  // ae (document_ae.cpp).
  void loss_curves_of(const Ladder& l, const std::string& heading);
  void reconstructions_of(const Ladder& l, const std::string& heading);

  const std::vector<Record>& records_;
  const Grids& grids_;
  const Parents& parents_;
  const Probes probes_;
  const std::string render_note_;
  std::ostringstream md_;
  std::vector<Figure> figures_;
  FigureNames names_;
};

}  // namespace report::sections
