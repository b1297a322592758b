// REPORT.md and its figures, built from checked records. Deterministic: the same records
// give the same bytes (nothing about the run that writes it appears in it).
#pragma once
#include <string>
#include <vector>

#include "figures.hpp"
#include "records.hpp"

namespace report {

struct Document {
  std::string markdown;
  std::vector<Figure> figures;
};

// `render_note` is empty when the figures will be rendered, else one sentence saying why not.
// A row's step speedup is over its declared parent (`parents`), or over the row above for a
// step that declares none.
Document build_document(const std::vector<Record>& records, const std::vector<Input>& inputs,
                        const Grids& grids, const Parents& parents, const std::string& render_note);

// The line build_document writes when the plots are not rendered starts with this, so that a
// check of a committed report can tell that line from the results.
extern const char* const kNotRenderedMarker;

}  // namespace report
