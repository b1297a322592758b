// Writes the AE track's synthetic images (datasets/ae.md) as one float32 .npy of shape
// (images, 3, height, width): the images a step trains on for the same --size, --images and
// --seed, for the PyTorch peer (steps/ae/pytorch/peer.py --images-npy) and other tools.
#include <cstdio>

#include "core/cli.hpp"
#include "ae/data.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "ae/problem.hpp"

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] {
    CLI::App app{"stepwise ae: write the synthetic images as a .npy file", "ae_dataset"};
    std::string size = "large", out;
    uint64_t seed = 1;
    int images = 0;
    app.add_option("--size", size, "tiny | small | large: the preset's image size and count")
        ->check(CLI::IsMember({"tiny", "small", "large"}))->capture_default_str();
    app.add_option("--images", images, "Images (default: the preset's)")->check(CLI::Range(1, 200000));
    app.add_option("--seed", seed, "Seed of the images, as the steps' --seed")->capture_default_str();
    app.add_option("--out", out, "The .npy file to write")->required();
    if (auto code = core::parse_command_line(app, argc, argv)) return *code;
    core::check_output_path("--out", out);

    const ae::Preset pre = ae::preset(size);
    const int count = images ? images : pre.images;
    const ae::ImageSet set = ae::synthetic_images(count, pre.model.channels, pre.model.height, pre.model.width, seed);
    core::write_npy(out, {size_t(set.count), size_t(set.channels), size_t(set.height), size_t(set.width)}, set.pixels.data());
    printf("%s: %d synthetic images of %dx%dx%d, seed %llu\n", out.c_str(), set.count, set.channels, set.height, set.width,
           (unsigned long long)seed);
    return 0;
  });
}
