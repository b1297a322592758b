#include "epic/inputs.hpp"

namespace epic {

StepInputs::StepInputs(const Problem& p)
    : weight_x_(p.plan.weight_x.begin(), p.plan.weight_x.end()),
      weight_y_(p.plan.weight_y.begin(), p.plan.weight_y.end()),
      correction_(p.correction.begin(), p.correction.end()) {
  const Imaging& im = p.imaging;
  in_ = {im.image_size, im.support, p.station.size(), p.obs.channels, p.obs.pols, p.obs.samples_per_gulp,
         p.obs.gulps, p.voltages.data(), p.plan.cell_x.data(), p.plan.cell_y.data(), weight_x_.data(),
         weight_y_.data(), correction_.data(), im.products.data(), int(im.products.size()), plane_count(im.products),
         im.remove_autos};
}

}  // namespace epic
