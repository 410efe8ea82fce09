// The survey a SEG-Y file placed a grid in, kept beside rtm's own axes (docs/io.md, "The survey's
// frame"): how rtm's x and y lie in the world (the SEG-Y coordinates, X easting and Y northing),
// and how the survey numbers its inlines and crosslines along them. A velocity model imported from
// SEG-Y records it as attributes of /vp, so a model and the shots of one survey line up, and
// `rtm export` writes the survey's own numbering and coordinates back.
#pragma once

#include <hdf5.h>

#include <array>
#include <string>

namespace rtm {

struct SurveyFrame {
  bool known = false; // false: no survey recorded (a generated model, NumPy, a file written before)
  // Whether the file's traces carried coordinates; false: placed by --spacing alone, so "world"
  // below means the grid's own frame.
  bool georeferenced = false;
  // rtm's (x, y) axes are the world's (X, Y) turned counterclockwise by this angle (degrees):
  // X = cos(r) x - sin(r) y, Y = sin(r) x + cos(r) y. 0 for a survey whose lines run along X and Y
  // (then rtm's coordinates are the file's own); within (-45, 45].
  double rotation_deg = 0;
  // Which rtm axis the inline numbers change along ('x' or 'y'; the crosslines along the other),
  // the numbers at index 0 and their step per cell (negative: numbers decrease as the index grows).
  char inline_axis = 'y';
  long long inline_first = 1, inline_step = 1, crossline_first = 1, crossline_step = 1;
  std::string note; // how the file's grid was turned into rtm's ("" when it was not)

  // World (X, Y) of the rtm position (x, y), and the inverse.
  std::array<double, 2> to_world(double x, double y) const;
  std::array<double, 2> from_world(double X, double Y) const;
  // The inline and crossline numbers of grid cell (i, j).
  long long inline_at(int i, int j) const { return inline_first + inline_step * (inline_axis == 'x' ? i : j); }
  long long crossline_at(int i, int j) const {
    return crossline_first + crossline_step * (inline_axis == 'x' ? j : i);
  }
};

// The frame as attributes of `object` (a grid dataset such as /vp): survey_rotation (float64,
// degrees), survey_georeferenced (int64 0/1), survey_inline_axis ("x"/"y"), survey_inline_first,
// survey_inline_step, survey_crossline_first, survey_crossline_step (int64), survey_note (string,
// when not empty). Nothing when !frame.known.
void write_survey_frame(hid_t object, const SurveyFrame& frame, const std::string& file);
// Reads those attributes back; known = false when the object has none. InputError naming the
// attribute when one is present but wrong (a step of 0, an axis other than x or y, ...).
SurveyFrame read_survey_frame(hid_t object, const std::string& file, const std::string& object_name);
// The frame of dataset `dataset` of the HDF5 file `path` (opens it; known = false without one).
SurveyFrame read_survey_frame(const std::string& path, const std::string& dataset);

} // namespace rtm
