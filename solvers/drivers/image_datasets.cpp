#include "solvers/drivers/image_datasets.h"

#include "solvers/contracts/closest_name.h"
#include "solvers/contracts/errors.h"

namespace rtm {

std::vector<std::string> ImageDatasets::names() const {
  std::vector<std::string> out;
  if (image) out.push_back("image");
  if (illumination) out.push_back("illumination");
  if (image_raw) out.push_back("image_raw");
  if (offset_gathers) out.push_back("offset_gathers");
  if (angle_gathers) out.push_back("angle_gathers");
  return out;
}

ImageDatasets parse_image_datasets(const std::string& list, const std::string& option,
                                   bool gathers) {
  const std::string expected = "expected a comma-separated list of image, illumination, image_raw, "
                               "offset_gathers, angle_gathers, or all";
  if (list == "all") return {true, true, true, gathers, gathers};
  ImageDatasets chosen{false, false, false, false, false};
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    const std::string name = list.substr(start, comma == std::string::npos ? comma : comma - start);
    bool* flag = name == "image"          ? &chosen.image
                 : name == "illumination" ? &chosen.illumination
                 : name == "image_raw"    ? &chosen.image_raw
                 : name == "offset_gathers" ? &chosen.offset_gathers
                 : name == "angle_gathers"  ? &chosen.angle_gathers
                                          : nullptr;
    if (!flag) {
      const std::string close = closest_name(name, {"image", "illumination", "image_raw", "offset_gathers",
                                                     "angle_gathers", "all"});
      throw InputError(option + " " + list + ": '" + name + "' is no dataset of a migration" +
                       (close.empty() ? "" : " (did you mean " + close + "?)") + "; " + expected);
    }
    if (*flag) throw InputError(option + " " + list + ": " + name + " is named twice");
    *flag = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return chosen;
}

std::string describe(const ImageDatasets& datasets) {
  std::string text;
  for (const std::string& name : datasets.names()) text += (text.empty() ? "/" : ", /") + name;
  return text;
}

} // namespace rtm
