#include "io/checkpoint_file.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "io/hdf5_util.h"
#include "io/volume_file.h"

namespace rtm {
namespace {

// 2: the model's fingerprint from per-plane digests (fingerprint_planes), 2026-11-28.
constexpr const char* kFormat = "rtm-migration-checkpoint 2";
constexpr const char* kSuffix = ".checkpoint-";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator))
    if (!item.empty()) items.push_back(item);
  return items;
}

std::string shots_string(size_t count) { return std::to_string(count) + " shot(s)"; }

// Planes z_begin <= z < z_end of a float [nz][ny][nx] dataset (an HDF5 hyperslab).
std::vector<float> read_planes(hid_t dataset, const std::vector<hsize_t>& dims,
                               const std::string& path, const char* name, int z_begin, int z_end) {
  if (z_begin < 0 || z_end < z_begin || hsize_t(z_end) > dims[0])
    throw InputError(path + ": /" + name + " has " + std::to_string(dims[0]) +
                     " planes; planes " + std::to_string(z_begin) + " to " +
                     std::to_string(z_end - 1) + " were asked for: the checkpoint is of another grid");
  const hsize_t start[3] = {hsize_t(z_begin), 0, 0};
  const hsize_t count[3] = {hsize_t(z_end - z_begin), dims[1], dims[2]};
  std::vector<float> values(size_t(count[0] * count[1] * count[2]));
  if (values.empty()) return values;
  h5::Dataspace file_space(H5Dget_space(dataset));
  h5::Dataspace memory_space(H5Screate_simple(3, count, nullptr));
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, values.data()) < 0)
    throw InputError(path + ": cannot read planes " + std::to_string(z_begin) + " to " +
                     std::to_string(z_end - 1) + " of /" + name + " (HDF5: " +
                     h5::last_hdf5_error() + ")");
  return values;
}

} // namespace

std::string checkpoint_path(const std::string& output, int group) {
  return output + kSuffix + std::to_string(group) + ".h5";
}

std::vector<std::string> find_checkpoints(const std::string& output) {
  namespace fs = std::filesystem;
  const fs::path out(output);
  const fs::path directory = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string prefix = out.filename().string() + kSuffix;
  std::map<long, std::string> by_group;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - 3, 3, ".h5") != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    // The path as checkpoint_path spells it, so messages name files the way the user named output.
    by_group[std::stol(digits)] = checkpoint_path(output, int(std::stol(digits)));
  }
  std::vector<std::string> paths;
  for (const auto& [group, path] : by_group) paths.push_back(path);
  return paths;
}

std::string new_checkpoint_id() {
  // random_device may be deterministic on some platforms: the clock keeps two runs apart anyway.
  static std::mt19937_64 generator{
      (uint64_t(std::random_device{}()) << 32) ^
      uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())};
  return fingerprint_hex(generator());
}

std::string fingerprint_hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

uint64_t parse_fingerprint_hex(const std::string& text, const std::string& subject) {
  size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw InputError(subject + " is '" + text + "'; expected a hexadecimal number");
  return value;
}

uint64_t fingerprint(const void* data, size_t bytes, uint64_t hash) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

namespace {

// One plane's digest: four lanes, each taking every fourth 8-byte word as FNV-1a takes a byte (xor,
// multiply by the FNV prime) and folding its high half into the low one (a product carries a
// change only upwards), so that the lanes' multiplies overlap; the tail bytes and the length go
// through FNV-1a at the end. Any one changed byte changes the digest: each step is a bijection of
// the lane's state.
uint64_t plane_digest(const unsigned char* p, size_t bytes) {
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t lane[4] = {kFingerprintSeed, kFingerprintSeed ^ 1, kFingerprintSeed ^ 2,
                      kFingerprintSeed ^ 3};
  const size_t words = bytes / 8;
  size_t w = 0;
  for (; w + 4 <= words; w += 4)
    for (int l = 0; l < 4; ++l) {
      uint64_t word;
      std::memcpy(&word, p + 8 * (w + size_t(l)), 8);
      lane[l] = (lane[l] ^ word) * kPrime;
      lane[l] ^= lane[l] >> 32;
    }
  for (int l = 0; w < words; ++w, ++l) {
    uint64_t word;
    std::memcpy(&word, p + 8 * w, 8);
    lane[l] = (lane[l] ^ word) * kPrime;
    lane[l] ^= lane[l] >> 32;
  }
  uint64_t h = fingerprint(lane, sizeof lane);
  h = fingerprint(p + 8 * words, bytes - 8 * words, h);
  const uint64_t length = bytes;
  return fingerprint(&length, sizeof length, h);
}

} // namespace

std::vector<uint64_t> plane_digests(const void* data, size_t plane_bytes, size_t planes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::vector<uint64_t> digests(planes);
  const auto count = int64_t(planes);
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < count; ++k)
    digests[size_t(k)] = plane_digest(p + size_t(k) * plane_bytes, plane_bytes);
  return digests;
}

uint64_t fingerprint_planes(const void* data, size_t plane_bytes, size_t planes, uint64_t hash) {
  const std::vector<uint64_t> digests = plane_digests(data, plane_bytes, planes);
  return fingerprint(digests.data(), digests.size() * sizeof(uint64_t), hash);
}

namespace {

// Everything of a checkpoint but its sums.
void write_header(hid_t file, const MigrationCheckpoint& c, const std::string& path) {
  const std::vector<double> finished(c.finished.begin(), c.finished.end()); // exact below 2^53
  h5::write_dataset(file, "finished_shots", {hsize_t(finished.size())}, finished.data(), path);
  h5::write_string_attribute(file, "format", kFormat, path);
  h5::write_string_attribute(file, "id", c.id, path);
  h5::write_string_attribute(file, "absorbed_ids", join(c.absorbed), path);
  h5::write_integer_attribute(file, "group", c.group, path);
  const CheckpointIdentity& i = c.identity;
  h5::write_string_attribute(file, "shot_file", i.shot_file, path);
  h5::write_integer_attribute(file, "shot_file_bytes", i.shot_file_bytes, path);
  h5::write_integer_attribute(file, "shot_count", i.shot_count, path);
  h5::write_string_attribute(file, "shots_fingerprint", fingerprint_hex(i.shots_fingerprint), path);
  h5::write_string_attribute(file, "model_fingerprint", fingerprint_hex(i.model_fingerprint), path);
  h5::write_string_attribute(file, "parameters", i.parameters, path);
}

} // namespace

void write_checkpoint(const std::string& path, const MigrationCheckpoint& c) {
  const size_t cells = size_t(c.nx) * size_t(c.ny) * size_t(c.nz);
  if (c.nx < 1 || c.ny < 1 || c.nz < 1 || c.raw_image.size() != cells ||
      c.illumination.size() != cells)
    throw std::invalid_argument("write_checkpoint: the image and illumination must hold nz*ny*nx values");
  const std::vector<hsize_t> dims = {hsize_t(c.nz), hsize_t(c.ny), hsize_t(c.nx)};
  h5::write_hdf5_atomically(path, [&](hid_t file) {
    h5::write_dataset(file, "image_raw", dims, c.raw_image.data(), path);
    h5::write_dataset(file, "illumination", dims, c.illumination.data(), path);
    write_header(file, c, path);
  });
}

void write_checkpoint_in_parts(const std::string& path, const MigrationCheckpoint& c,
                               const std::function<void(const std::string& temporary)>& write_parts) {
  if (c.nx < 1 || c.ny < 1 || c.nz < 1)
    throw std::invalid_argument("write_checkpoint_in_parts: the sums need nz, ny, nx >= 1");
  const hsize_t dims[3] = {hsize_t(c.nz), hsize_t(c.ny), hsize_t(c.nx)};
  h5::write_hdf5_atomically(
      path,
      [&](hid_t file) {
        for (const char* name : {"image_raw", "illumination"}) {
          // Space on disk now, no fill values: the parts write every plane.
          h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
          h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
          if (!space.valid() || !create.valid() ||
              H5Pset_alloc_time(create, H5D_ALLOC_TIME_EARLY) < 0 ||
              H5Pset_fill_time(create, H5D_FILL_TIME_NEVER) < 0)
            throw std::runtime_error(path + ": cannot set up dataset " + name + " (HDF5)");
          h5::Dataset dataset(H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, create,
                                         H5P_DEFAULT));
          if (!dataset.valid()) throw std::runtime_error(path + ": cannot create dataset " + name + " (HDF5)");
        }
        write_header(file, c, path);
      },
      write_parts);
}

void write_checkpoint_planes(const std::string& temporary, int z_first,
                             const std::vector<float>& raw_image,
                             const std::vector<float>& illumination) {
  if (raw_image.size() != illumination.size())
    throw std::invalid_argument("write_checkpoint_planes: the image and illumination differ in size");
  write_volume_planes(temporary, "image_raw", z_first, raw_image);
  write_volume_planes(temporary, "illumination", z_first, illumination);
}

MigrationCheckpoint read_checkpoint(const std::string& path) { return read_checkpoint_planes(path, 0, -1); }

MigrationCheckpoint read_checkpoint_planes(const std::string& path, int z_begin, int z_end) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  auto text = [&](const char* name) {
    return h5::read_string_attribute(file, name, h5::attribute_subject(path, "/", name));
  };
  auto integer = [&](const char* name) {
    const double value =
        h5::read_double_attribute(file, name, 1, h5::attribute_subject(path, "/", name),
                                  "a whole number")[0];
    if (value != std::floor(value) || value < 0)
      throw InputError(h5::attribute_subject(path, "/", name) + " is " + std::to_string(value) +
                       "; expected a whole number >= 0");
    return static_cast<long long>(value);
  };
  const std::string format = h5::has_attribute(file, "format") ? text("format") : "";
  if (format == "rtm-migration-checkpoint 1")
    throw InputError(path + ": a checkpoint of an earlier rtm (format '" + format + "', whose model "
                     "fingerprint this rtm computes otherwise): it cannot be resumed; delete it "
                     "(and its siblings) and run again without --resume");
  if (format != kFormat)
    throw InputError(path + ": not an rtm migration checkpoint (root attribute format is '" +
                     format + "'; expected '" + kFormat + "')");

  MigrationCheckpoint c;
  c.id = text("id");
  c.absorbed = split(text("absorbed_ids"), ',');
  c.group = int(integer("group"));
  CheckpointIdentity& i = c.identity;
  i.shot_file = text("shot_file");
  i.shot_file_bytes = integer("shot_file_bytes");
  i.shot_count = integer("shot_count");
  i.shots_fingerprint =
      parse_fingerprint_hex(text("shots_fingerprint"), h5::attribute_subject(path, "/", "shots_fingerprint"));
  i.model_fingerprint =
      parse_fingerprint_hex(text("model_fingerprint"), h5::attribute_subject(path, "/", "model_fingerprint"));
  i.parameters = text("parameters");

  std::vector<hsize_t> dims;
  for (const char* name : {"image_raw", "illumination"}) {
    const h5::Dataset dataset = h5::open_dataset(file, path, name);
    const std::vector<hsize_t> shape = h5::dataset_shape(dataset, path, name);
    h5::require_rank(shape, 3, path, name, "[nz][ny][nx]");
    if (!dims.empty() && shape != dims)
      throw InputError(path + ": /illumination has shape " + h5::shape_string(shape) +
                       " but /image_raw has " + h5::shape_string(dims));
    dims = shape;
    (std::string(name) == "image_raw" ? c.raw_image : c.illumination) =
        z_end < 0 ? h5::read_floats(dataset, path, name)
                  : read_planes(dataset, shape, path, name, z_begin, z_end);
  }
  c.nz = int(dims[0]);
  c.ny = int(dims[1]);
  c.nx = int(dims[2]);
  const h5::Dataset finished = h5::open_dataset(file, path, "finished_shots");
  std::set<long long> seen;
  for (double shot : h5::read_doubles(finished, path, "finished_shots")) {
    if (!(shot >= 0) || shot != std::floor(shot) || shot >= double(i.shot_count))
      throw InputError(path + ": /finished_shots holds " + std::to_string(shot) +
                       "; expected shot indices from 0 to " + std::to_string(i.shot_count - 1));
    if (!seen.insert(static_cast<long long>(shot)).second)
      throw InputError(path + ": /finished_shots lists shot " + std::to_string(shot) + " twice");
    c.finished.push_back(static_cast<long long>(shot));
  }
  return c;
}

void check_same_run(const CheckpointIdentity& saved, const CheckpointIdentity& now,
                    const std::string& path) {
  const std::string advice =
      "; resume with the inputs and options of the interrupted run, or delete the checkpoint "
      "file(s) " + path + " (and its siblings) to start afresh";
  if (saved.shot_count != now.shot_count || saved.shot_file_bytes != now.shot_file_bytes ||
      saved.shots_fingerprint != now.shots_fingerprint)
    throw InputError(path + " was written for shot file " + saved.shot_file + " (" +
                     std::to_string(saved.shot_file_bytes) + " bytes, " +
                     shots_string(size_t(saved.shot_count)) + ", fingerprint " +
                     fingerprint_hex(saved.shots_fingerprint) + "), but this run migrates " + now.shot_file +
                     " (" + std::to_string(now.shot_file_bytes) + " bytes, " +
                     shots_string(size_t(now.shot_count)) + ", fingerprint " +
                     fingerprint_hex(now.shots_fingerprint) + ")" + advice);
  if (saved.model_fingerprint != now.model_fingerprint)
    throw InputError(path + " was written with other migration velocities (fingerprint " +
                     fingerprint_hex(saved.model_fingerprint) + "; this run's model gives " +
                     fingerprint_hex(now.model_fingerprint) + ": another model file or --smooth)" + advice);
  if (saved.parameters != now.parameters) {
    const std::vector<std::string> before = split(saved.parameters, '\n'),
                                   after = split(now.parameters, '\n');
    std::string differences;
    for (size_t k = 0; k < std::max(before.size(), after.size()); ++k) {
      const std::string a = k < before.size() ? before[k] : "(none)";
      const std::string b = k < after.size() ? after[k] : "(none)";
      if (a != b) differences += (differences.empty() ? "" : "; ") + ("checkpoint " + a + ", now " + b);
    }
    throw InputError(path + " was written with other migration parameters: " + differences + advice);
  }
}

MigrationCheckpoint merge_checkpoints(const std::vector<MigrationCheckpoint>& checkpoints,
                                      const std::vector<std::string>& paths) {
  if (checkpoints.empty() || checkpoints.size() != paths.size())
    throw std::invalid_argument("merge_checkpoints: one path per checkpoint, at least one");
  std::set<std::string> absorbed, seen;
  for (const MigrationCheckpoint& c : checkpoints) {
    absorbed.insert(c.absorbed.begin(), c.absorbed.end());
    seen.insert(c.id);
    seen.insert(c.absorbed.begin(), c.absorbed.end());
  }
  MigrationCheckpoint merged;
  merged.id = new_checkpoint_id();
  merged.absorbed.assign(seen.begin(), seen.end());
  std::map<long long, size_t> owner; // shot -> index of the checkpoint holding it
  bool first = true;
  for (size_t k = 0; k < checkpoints.size(); ++k) {
    const MigrationCheckpoint& c = checkpoints[k];
    if (absorbed.count(c.id)) continue; // already inside another file's sums (checkpoints_to_sum)
    if (first) {
      merged.identity = c.identity;
      merged.nx = c.nx;
      merged.ny = c.ny;
      merged.nz = c.nz;
      merged.raw_image = c.raw_image; // copied, not added to zeros: the sums stay bit for bit
      merged.illumination = c.illumination;
      first = false;
    } else {
      check_same_run(c.identity, merged.identity, paths[k]);
      if (c.nx != merged.nx || c.ny != merged.ny || c.nz != merged.nz)
        throw InputError(paths[k] + ": image of " + std::to_string(c.nx) + "x" +
                         std::to_string(c.ny) + "x" + std::to_string(c.nz) + " cells, but the other "
                         "checkpoints hold " + std::to_string(merged.nx) + "x" +
                         std::to_string(merged.ny) + "x" + std::to_string(merged.nz));
      for (size_t cell = 0; cell < merged.raw_image.size(); ++cell) {
        merged.raw_image[cell] += c.raw_image[cell];
        merged.illumination[cell] += c.illumination[cell];
      }
    }
    for (long long shot : c.finished) {
      const auto [it, fresh] = owner.emplace(shot, k);
      if (!fresh)
        throw InputError("checkpoints " + paths[it->second] + " and " + paths[k] +
                         " both hold shot " + std::to_string(shot) + ": they do not belong to one "
                         "run; delete the checkpoint files to start afresh");
    }
  }
  for (const auto& [shot, k] : owner) merged.finished.push_back(shot);
  return merged;
}

} // namespace rtm

namespace rtm {

std::vector<size_t> checkpoints_to_sum(const std::vector<MigrationCheckpoint>& checkpoints) {
  std::set<std::string> absorbed;
  for (const MigrationCheckpoint& c : checkpoints) absorbed.insert(c.absorbed.begin(), c.absorbed.end());
  std::vector<size_t> kept;
  for (size_t k = 0; k < checkpoints.size(); ++k)
    if (!absorbed.count(checkpoints[k].id)) kept.push_back(k);
  return kept;
}

} // namespace rtm
