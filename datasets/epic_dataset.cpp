// Writes a generated EPIC problem as a folder (datasets/epic.md): meta.json, stands.csv and
// voltages.npy, for --input, for other tools, or to corrupt on purpose in the tests.
#include <cstdio>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "epic/problem.hpp"

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] {
    CLI::App app{"stepwise epic: write a generated problem as a folder", "epic_dataset"};
    std::string size = "tiny", folder, stands;
    uint64_t seed = 1;
    int channels = 0, samples = 0, gulps = 1, pols = 2;
    double start_mhz = 38;
    app.add_option("--size", size, "tiny | small | large")->check(CLI::IsMember({"tiny", "small", "large"}))->capture_default_str();
    app.add_option("--seed", seed, "Seed of the station, sky and voltages")->capture_default_str();
    app.add_option("--stands", stands, "Stand positions (CSV) instead of the generated station");
    app.add_option("--channels", channels, "Channels (default from --size)")->check(CLI::Range(1, epic::kMaxChannels));
    app.add_option("--samples", samples, "Samples per gulp (default from --size)")->check(CLI::Range(1, 4000));
    app.add_option("--gulps", gulps, "Gulps")->check(CLI::Range(1, 64))->capture_default_str();
    app.add_option("--pols", pols, "Polarizations")->check(CLI::Range(1, 2))->capture_default_str();
    app.add_option("--start-freq", start_mhz, "Centre of the first channel, MHz")->check(core::FiniteRange(10.0, 88.0))->capture_default_str();
    app.add_option("--folder", folder, "Folder to write")->required();
    if (auto code = core::parse_command_line(app, argc, argv)) return *code;

    const epic::Preset preset = epic::preset_of_size(size);
    epic::Problem p;
    p.name = size;
    p.seed = seed;
    p.obs.channels = channels ? channels : preset.channels;
    p.obs.samples_per_gulp = samples ? samples : preset.samples_per_gulp;
    p.obs.gulps = gulps;
    p.obs.pols = pols;
    p.obs.first_channel_hz = start_mhz * 1e6;
    p.station = stands.empty() ? epic::generate_station(seed) : epic::read_stands(stands);
    p.sky = epic::default_sky(seed);
    p.has_sky = true;
    // The folder is settled once the inputs have been read (a bad --stands leaves no folder
    // behind) and before the voltages are simulated, the run's whole cost.
    core::make_output_folder("--folder", folder);
    epic::simulate_voltages(p);
    epic::save_folder(p, folder);
    printf("%s: %d stands, %d samples x %d channels x %d pols (%zu bytes of voltages)\n", folder.c_str(),
           p.station.size(), p.obs.samples(), p.obs.channels, p.obs.pols, p.voltages.size());
    return 0;
  });
}
