// Which volumes a migration writes into its output file (`rtm migrate --datasets`, docs/rtm.md
// section 5). Each is a float32 volume the size of the model, so each costs the image's write time
// again (23 GB at 1800^3): the default is the image alone, the others on request.
//
//   image          the final image (normalised, filtered, muted): what a migration is for
//   illumination   the stacked source illumination sum S^2: where the image can be trusted
//   image_raw      the stacked cross-correlation sum S R: to normalise again or stack runs
//   offset_gathers the subsurface-offset gathers of --offset-lags (docs/rtm.md, section 5d)
//   angle_gathers  the angle gathers made from them
// The two gathers are written by default when --offset-lags asks for gathers, and only then.
#pragma once

#include <string>
#include <vector>

namespace rtm {

struct ImageDatasets {
  bool image = true;
  bool illumination = false;
  bool image_raw = false;
  bool offset_gathers = false;
  bool angle_gathers = false;
  // The volumes (each the size of the model); the gathers are not counted.
  int count() const { return int(image) + int(illumination) + int(image_raw); }
  bool gathers() const { return offset_gathers || angle_gathers; }
  // The names of the datasets written, in the file's order (image, illumination, image_raw,
  // offset_gathers, angle_gathers).
  std::vector<std::string> names() const;
};

// The default (kDefaultImageDatasets) and the names a list may hold.
constexpr const char* kDefaultImageDatasets = "image";

// A comma-separated list of image, illumination, image_raw, offset_gathers, angle_gathers (each
// at most once), or "all" (the three volumes, and both gathers when `gathers`).
// Throws InputError naming `option` and the names it takes for anything else (an empty list too).
ImageDatasets parse_image_datasets(const std::string& list, const std::string& option = "--datasets",
                                   bool gathers = false);

// "/image, /illumination" for messages.
std::string describe(const ImageDatasets& datasets);

} // namespace rtm
