// mc's sections beside its ladder: the heat profile of the photons' walk.
#include "document_sections.hpp"

namespace report::sections {

// Rows that record their heat per shell (record.profile: mc's steps): the last such row's
// profile against the exact transport solution.
void Writer::heat_profile_of(const Ladder& l, const std::string& heading) {
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
  const std::string machine = l.machine_of(*with_profile);
  const std::string step = with_profile->step() + (machine.empty() ? "" : " on " + machine);
  figures_.push_back(heat_profile(name, "heat profile, " + step + ", " + heading, profile));
  md_ << "Heat profile of `" << with_profile->step() << "`" << (machine.empty() ? "" : " on " + machine)
      << " against the exact transport solution:\n\n"
      << "![heat profile, " << step << "](figures/" << name << ".png)\n\n";
}

}  // namespace report::sections
