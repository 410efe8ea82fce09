// Which volumes a migration writes into its output file (`rtm migrate --datasets`, docs/rtm.md
// section 5). Each is a float32 volume the size of the model, so each costs the image's write time
// again (23 GB at 1800^3): the default is the image alone, the others on request.
//
//   image          the final image (normalised, filtered, muted): what a migration is for
//   illumination   the stacked source illumination sum S^2: where the image can be trusted
//   image_raw      the stacked cross-correlation sum S R: to normalise again or stack runs
#pragma once

#include <string>
#include <vector>

namespace rtm {

struct ImageDatasets {
  bool image = true;
  bool illumination = false;
  bool image_raw = false;
  int count() const { return int(image) + int(illumination) + int(image_raw); }
  // The names of the datasets written, in the file's order (image, illumination, image_raw).
  std::vector<std::string> names() const;
};

// The default (kDefaultImageDatasets) and the names a list may hold.
constexpr const char* kDefaultImageDatasets = "image";

// A comma-separated list of image, illumination, image_raw (each at most once), or "all".
// Throws InputError naming `option` and the names it takes for anything else (an empty list too).
ImageDatasets parse_image_datasets(const std::string& list, const std::string& option = "--datasets");

// "/image, /illumination" for messages.
std::string describe(const ImageDatasets& datasets);

} // namespace rtm
