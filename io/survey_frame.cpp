#include "io/survey_frame.h"

#include <cmath>

#include "io/hdf5_util.h"
#include "solvers/contracts/errors.h"

namespace rtm {

std::array<double, 2> SurveyFrame::to_world(double x, double y) const {
  if (rotation_deg == 0) return {x, y}; // exact: an axis-aligned survey keeps its coordinates
  const double r = rotation_deg * M_PI / 180.0;
  return {std::cos(r) * x - std::sin(r) * y, std::sin(r) * x + std::cos(r) * y};
}

std::array<double, 2> SurveyFrame::from_world(double X, double Y) const {
  if (rotation_deg == 0) return {X, Y};
  const double r = rotation_deg * M_PI / 180.0;
  return {std::cos(r) * X + std::sin(r) * Y, -std::sin(r) * X + std::cos(r) * Y};
}

void write_survey_frame(hid_t object, const SurveyFrame& frame, const std::string& file) {
  if (!frame.known) return;
  h5::write_double_attribute(object, "survey_rotation", frame.rotation_deg, file);
  h5::write_integer_attribute(object, "survey_georeferenced", frame.georeferenced ? 1 : 0, file);
  h5::write_string_attribute(object, "survey_inline_axis", std::string(1, frame.inline_axis), file);
  h5::write_integer_attribute(object, "survey_inline_first", frame.inline_first, file);
  h5::write_integer_attribute(object, "survey_inline_step", frame.inline_step, file);
  h5::write_integer_attribute(object, "survey_crossline_first", frame.crossline_first, file);
  h5::write_integer_attribute(object, "survey_crossline_step", frame.crossline_step, file);
  if (!frame.note.empty()) h5::write_string_attribute(object, "survey_note", frame.note, file);
}

namespace {
double scalar(hid_t object, const std::string& name, const std::string& file,
              const std::string& object_name, const std::string& meaning) {
  return h5::read_double_attribute(object, name, 1, h5::attribute_subject(file, object_name, name),
                                   meaning)[0];
}

long long whole(hid_t object, const std::string& name, const std::string& file,
                const std::string& object_name, bool nonzero) {
  const double v = scalar(object, name, file, object_name, "a whole line number");
  // Line numbers come from 4-byte header fields; anything else is not a number rtm wrote.
  if (!(v == std::floor(v) && std::abs(v) <= 4294967296.0) || (nonzero && v == 0))
    throw InputError(h5::attribute_subject(file, object_name, name) + " is " +
                     h5::values_string({v}) + "; expected a whole number" +
                     (nonzero ? " other than 0 (the step between line numbers)" : ""));
  return (long long)v;
}
} // namespace

SurveyFrame read_survey_frame(hid_t object, const std::string& file, const std::string& object_name) {
  SurveyFrame frame;
  if (!h5::has_attribute(object, "survey_rotation")) return frame;
  frame.known = true;
  frame.rotation_deg = scalar(object, "survey_rotation", file, object_name, "degrees");
  if (!(std::isfinite(frame.rotation_deg) && frame.rotation_deg > -180 && frame.rotation_deg <= 180))
    throw InputError(h5::attribute_subject(file, object_name, "survey_rotation") + " is " +
                     h5::values_string({frame.rotation_deg}) + "; expected an angle in degrees");
  if (h5::has_attribute(object, "survey_georeferenced"))
    frame.georeferenced = whole(object, "survey_georeferenced", file, object_name, false) != 0;
  const std::string axis = h5::read_string_attribute(
      object, "survey_inline_axis", h5::attribute_subject(file, object_name, "survey_inline_axis"));
  if (axis != "x" && axis != "y")
    throw InputError(h5::attribute_subject(file, object_name, "survey_inline_axis") + " is \"" +
                     axis + "\"; expected \"x\" or \"y\" (the rtm axis the inline numbers change along)");
  frame.inline_axis = axis[0];
  frame.inline_first = whole(object, "survey_inline_first", file, object_name, false);
  frame.inline_step = whole(object, "survey_inline_step", file, object_name, true);
  frame.crossline_first = whole(object, "survey_crossline_first", file, object_name, false);
  frame.crossline_step = whole(object, "survey_crossline_step", file, object_name, true);
  if (h5::has_attribute(object, "survey_note"))
    frame.note = h5::read_string_attribute(object, "survey_note",
                                           h5::attribute_subject(file, object_name, "survey_note"));
  return frame;
}

SurveyFrame read_survey_frame(const std::string& path, const std::string& dataset) {
  h5::ErrorStackSilencer silence;
  const h5::File in = h5::open_file_for_reading(path);
  const h5::Dataset d = h5::open_dataset(in, path, dataset);
  return read_survey_frame(d, path, dataset);
}

} // namespace rtm
