// mri_dataset: writes a built-in MRI problem as a problem folder (meta.json + .npy) or as a
// Parboil mri-q input file, so that it can be read back with --input / --input-parboil,
// inspected with numpy, or edited.
#include <cstdio>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "mri/problem.hpp"

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] {
    CLI::App app{"mri_dataset: write a generated MRI problem to disk", "mri_dataset"};
    std::string size = "tiny", folder, parboil;
    uint64_t seed = 1;
    double noise = 0;
    app.add_option("--size", size, "tiny | small | large")->check(CLI::IsMember({"tiny", "small", "large"}))->capture_default_str();
    app.add_option("--seed", seed, "Seed")->capture_default_str();
    app.add_option("--noise", noise, "Complex Gaussian noise (fraction of |d(0)|)")->check(CLI::Range(0.0, 10.0));
    app.add_option("--folder", folder, "Write a problem folder here");
    app.add_option("--parboil", parboil, "Write a Parboil mri-q input file here (no k-space data)");
    if (auto code = core::parse_command_line(app, argc, argv)) return *code;
    if (folder.empty() && parboil.empty()) throw core::UsageError("name --folder DIR and/or --parboil FILE");
    // Both destinations are settled before the problem is generated (seconds at --size large).
    core::check_output_path("--parboil", parboil);
    if (!folder.empty()) core::make_output_folder("--folder", folder);
    const mri::Problem p = mri::generate(size, seed, noise);
    if (!folder.empty()) mri::save_folder(p, folder);
    if (!parboil.empty()) mri::save_parboil(p, parboil);
    printf("%s: %zu samples x %zu voxels, digest %s\n", size.c_str(), p.samples(), p.voxels(), p.digest().c_str());
    return 0;
  });
}
