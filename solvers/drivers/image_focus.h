// How much of a migrated image lies on the reflectors of the model that made the data: the focus
// figure of `rtm demo` (docs/rtm.md, section 11a).
//
//   interface cell: a cell whose reflection coefficient |v_n - v_c| / (v_n + v_c) with one of its
//                   six face neighbours n reaches `min_reflection` (both cells of the pair count);
//   near:           within `radius` cells of an interface cell along every axis
//                   (|di|, |dj|, |dk| <= radius: a (2 radius + 1)^3 cube around it);
//   focus:          sum of image^2 over the near cells / sum of image^2 over the whole volume.
//
// A smooth velocity gradient changes by less than min_reflection from cell to cell and is no
// interface; every jump of a blocky model (layers, salt) is. An image made of noise spread evenly
// scores the near cells' share of the volume (ImageFocus::near_share), a perfect one 1.
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/contracts/velocity_model.h"

namespace rtm {

constexpr int kFocusRadius = 3;               // cells
constexpr double kFocusMinReflection = 0.01;  // 1%: a 2% velocity jump

// 1 where the model has an interface, [nz][ny][nx] like the model.
std::vector<uint8_t> interface_cells(const VelocityModel& model, double min_reflection);

// 1 within `radius` cells (the cube above) of a cell marked in `marked` ([nz][ny][nx]).
std::vector<uint8_t> cells_near(const std::vector<uint8_t>& marked, int nx, int ny, int nz,
                                int radius);

struct ImageFocus {
  double focus = 0;           // share of the image's energy near an interface; 0 for a zero image
  double near_share = 0;      // share of the cells that are near an interface
  int64_t interface_cells = 0;
};

// The focus of `image` ([nz][ny][nx] on the model's grid) against the interfaces of `true_model`.
// std::invalid_argument when the sizes differ or radius < 0.
ImageFocus image_focus(const VelocityModel& true_model, const std::vector<float>& image,
                       int radius = kFocusRadius, double min_reflection = kFocusMinReflection);

} // namespace rtm
