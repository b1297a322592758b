// ae's sections beside its ladder: the images each row trained on, its training loss and the
// trained model's reconstructions.
#include "document_sections.hpp"

#include <algorithm>

namespace report::sections {

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

// Rows that record their training loss (training.losses, one value every training.every
// steps: the ae track): one curve per row.
void Writer::loss_curves_of(const Ladder& l, const std::string& heading) {
  // Losses on different images are not comparable: each curve then names its images.
  std::set<std::string> sources;
  for (const Record* r : l.rows)
    if (find_path(r->data, "training.losses")) sources.insert(text_at(r->data, "problem.params.data.source").value_or("?"));
  std::vector<Series> series;
  for (const Record* r : l.rows) {
    const json* losses = find_path(r->data, "training.losses");
    if (!losses || !losses->is_array() || losses->empty()) continue;
    const double every = number_at(r->data, "training.every").value_or(1);
    Series line{l.label(*r), {}};
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

// The newest row that recorded reconstructions (record.reconstructions: ae's
// --record-images): its first images in the top row, the trained model's outputs below.
void Writer::reconstructions_of(const Ladder& l, const std::string& heading) {
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
  const std::string step = l.label(*newest);
  const std::string name = names_(l.track + "-" + l.variant + "-" + l.problem + "-" +
                                  (l.device.empty() ? "cpu" : l.device) + "-reconstructions");
  figures_.push_back(image_grid(name, "inputs (top) and reconstructions (bottom): " + step + ", " + heading,
                                {"input", "output"}, {pictures("input"), pictures("output")}));
  md_ << "The first " << count << (count == 1 ? " image" : " images") << " (top) and " << row_md(l, *newest)
      << "'s reconstructions of them after training (below; 8-bit, clipped to the images' range"
      << (text_at(newest->data, "problem.params.data.source") ? "; " + images_of(*newest) : "") << ")";
  if (const auto mse = number_at(g, "mse")) md_ << ": loss (MSE) of these images " << printf_string("%.4g", *mse);
  const json* losses = find_path(newest->data, "training.losses");
  if (losses && losses->is_array() && !losses->empty() && losses->back().is_number())
    md_ << (number_at(g, "mse") ? ", " : ": ") << "last minibatch loss of the training "
        << printf_string("%.4g", losses->back().get<double>());
  md_ << ":\n\n![reconstructions, " << step << ", " << heading << "](figures/" << name << ".png)\n\n";
}

}  // namespace report::sections
