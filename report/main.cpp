// stepwise_report: turns recorded results (report/results/*.jsonl plus local runs) into
// REPORT.md with ladder tables and gnuplot figures. See report/README.md.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/cli.hpp"
#include "document.hpp"
#include "core/error.hpp"
#include "figures.hpp"
#include "records.hpp"

namespace {

struct Options {
  std::string results = "report/results";
  std::string steps;  // default: the steps/ folder beside report/ of --results
  std::vector<std::string> extra;
  std::string out = "build/report";
  std::string gnuplot = "gnuplot";
  bool no_render = false;
  bool quiet = false;
};

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"stepwise_report: REPORT.md and figures from results records", "stepwise_report"};
  app.add_option("--results", o.results, "Folder of recorded results: every *.jsonl in it is read")->capture_default_str();
  app.add_option("--extra,extra", o.extra, "More results files (JSONL), e.g. this machine's build/results/local.jsonl");
  app.add_option("--out", o.out, "Output folder: REPORT.md and figures/ (use 'report' for the committed rendering)")->capture_default_str();
  app.add_option("--steps", o.steps, "Step folders, for each step's parent (steps over their parents) and each tuned step's sweep.json "
                 "(its grid's keys are the tuning axes); "
                 "default: RESULTS/../../steps, the steps/ beside report/");
  app.add_option("--gnuplot", o.gnuplot, "gnuplot program")->capture_default_str();
  app.add_flag("--no-render", o.no_render, "Write the gnuplot scripts and data but do not run gnuplot");
  app.add_flag("--quiet", o.quiet, "Print only errors");
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;

  std::vector<report::Input> inputs = report::results_folder(o.results);
  for (const std::string& path : o.extra) {
    // Records are told apart by their file's name (a GPU host's CPU rows are those of its file),
    // so a second file of one name outside the repository keeps the path it was given.
    std::string name = report::extra_name(path, o.results);
    for (const report::Input& in : inputs)
      if (in.name == name) name = path;
    inputs.push_back({path, name, /*appended_locally=*/true});
  }
  const std::vector<report::Record> records = report::load(inputs);
  if (o.steps.empty()) o.steps = (std::filesystem::path(o.results) / ".." / ".." / "steps").lexically_normal().string();
  const report::Grids grids = report::load_grids(o.steps);
  const report::Parents parents = report::load_parents(o.steps);

  const std::string gnuplot = o.no_render ? "" : report::find_gnuplot(o.gnuplot);
  std::string note;
  if (o.no_render)
    note = "run with --no-render. The gnuplot scripts and their data are in figures/ (`cd figures && gnuplot NAME.gp`).";
  else if (gnuplot.empty())
    note = "gnuplot was not found on this machine. The gnuplot scripts and their data are in figures/; render them "
           "where gnuplot is installed (`cd figures && gnuplot NAME.gp`).";
  const report::Document doc = report::build_document(records, inputs, grids, parents, note);

  const std::string figures_dir = o.out + "/figures";
  report::write_figures(figures_dir, doc.figures);
  {
    std::ofstream md(o.out + "/REPORT.md", std::ios::binary);
    md << doc.markdown;
    if (!md) throw core::RuntimeError(o.out + "/REPORT.md: write failed");
  }
  if (!gnuplot.empty()) report::render_figures(gnuplot, figures_dir, doc.figures);
  if (!o.quiet)
    printf("stepwise_report: %zu records -> %s/REPORT.md, %zu figures%s\n", records.size(), o.out.c_str(),
           doc.figures.size(), gnuplot.empty() ? " (scripts and data only, not rendered)" : "");
  return core::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return run(argc, argv); });
}
