// Checkpoints of a migration (docs/robustness.md, "Resuming a migration"): the partial sums of one
// shot group - raw image and illumination - with the shots they contain and the identity of the run
// that made them, so that `rtm migrate --resume` continues exactly where the run stopped and refuses
// to continue a different run.
//
//   <output>.checkpoint-<group>.h5
//     /image_raw      float32 [nz][ny][nx]   sum over the finished shots of sum_n S R
//     /illumination   float32 [nz][ny][nx]   sum over the finished shots of sum_n S^2
//     /finished_shots float64 [n]            indices of the shots (in the shot file's order)
//     root attributes format ("rtm-migration-checkpoint 1"), id, absorbed_ids, group, the identity
//                     (shot_file, shot_file_bytes, shot_count, shots_fingerprint,
//                     model_fingerprint, parameters)
// Written under a temporary name and renamed, so a kill at any moment leaves either the previous
// checkpoint or the new one, never a damaged one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rtm {

// What makes two migrations the same computation: the same shots, the same migration velocities,
// the same parameters that change the raw image. (The normalisation eps and the Laplacian filter
// act after the stack, so a resume may change them.)
struct CheckpointIdentity {
  std::string shot_file;          // the path as given, for messages
  long long shot_file_bytes = 0;  // 0 when unknown
  long long shot_count = 0;
  uint64_t shots_fingerprint = 0; // of the traces, sources, receivers, wavelet, nt and dt
  uint64_t model_fingerprint = 0; // of the migration velocities and their grid
  std::string parameters;         // "name = value" lines, one per parameter
};

struct MigrationCheckpoint {
  std::string id;                    // unique to this file's content
  std::vector<std::string> absorbed; // ids of checkpoints whose sums this one already contains
  int group = 0;                     // the shot group that wrote it
  CheckpointIdentity identity;
  std::vector<long long> finished;   // shot indices whose contributions the sums hold
  int nx = 0, ny = 0, nz = 0;
  std::vector<float> raw_image, illumination; // [nz][ny][nx]
};

// "<output>.checkpoint-<group>.h5"
std::string checkpoint_path(const std::string& output, int group);
// The checkpoint files of `output` that exist now (names exactly as checkpoint_path makes them;
// temporary files of an interrupted write are not among them), sorted by group.
std::vector<std::string> find_checkpoints(const std::string& output);

// A fresh id for a checkpoint (random, 16 hex digits).
std::string new_checkpoint_id();

// 64-bit FNV-1a over bytes, continuing from `hash` (start with kFingerprintSeed).
constexpr uint64_t kFingerprintSeed = 14695981039346656037ull;
uint64_t fingerprint(const void* data, size_t bytes, uint64_t hash = kFingerprintSeed);
// A fingerprint as the files hold it (16 hex digits), and back (InputError naming `subject` for
// anything else); the migration and least-squares checkpoints share them.
std::string fingerprint_hex(uint64_t value);
uint64_t parse_fingerprint_hex(const std::string& text, const std::string& subject);

// The fingerprint of a volume's values (a model, its anisotropy), continuing from `hash`: each of
// the `planes` planes of `plane_bytes` gets a digest of its own, computed on every core at once,
// and FNV-1a runs over the digests in plane order. So consecutive runs of planes continued one
// from the other (the z-slabs of a group's ranks, in rank order) give the whole volume's value.
// FNV-1a byte by byte over a 512^3 model took 0.7 s (a multiply per byte, each waiting for the
// one before); the digests go 8 bytes a multiply over four independent lanes.
uint64_t fingerprint_planes(const void* data, size_t plane_bytes, size_t planes, uint64_t hash);
// The planes' digests alone, in order (fingerprint_planes = FNV-1a over them).
std::vector<uint64_t> plane_digests(const void* data, size_t plane_bytes, size_t planes);

void write_checkpoint(const std::string& path, const MigrationCheckpoint& checkpoint);
// InputError naming the file for anything that is not a complete checkpoint of this format.
MigrationCheckpoint read_checkpoint(const std::string& path);

// A checkpoint whose sums are held in z-slabs by several processes (docs/decomposition.md, "What
// each rank reads and holds"): the same file, written in parts. write_checkpoint_in_parts writes
// `header` (everything but the sums, which it ignores) and makes /image_raw and /illumination
// [nz][ny][nx] without values; then write_parts(temporary) has every holder write its planes
// (write_checkpoint_planes; serial HDF5: one process at a time), and only then is the file renamed
// onto `path`: it appears complete or not at all.
void write_checkpoint_in_parts(const std::string& path, const MigrationCheckpoint& header,
                               const std::function<void(const std::string& temporary)>& write_parts);
// Planes z_first .. of both sums ([planes][ny][nx] each) into the file being written in parts.
void write_checkpoint_planes(const std::string& temporary, int z_first,
                             const std::vector<float>& raw_image,
                             const std::vector<float>& illumination);
// read_checkpoint with only planes z_begin <= z < z_end of the sums read (an HDF5 hyperslab; none
// when z_begin == z_end); nx, ny, nz are the whole file's.
MigrationCheckpoint read_checkpoint_planes(const std::string& path, int z_begin, int z_end);

// InputError when `saved` (read from `path`) is not the run `now` describes, naming what differs
// (the shot file, the velocities, or each parameter with both values) and what to do.
void check_same_run(const CheckpointIdentity& saved, const CheckpointIdentity& now,
                    const std::string& path);

// All checkpoints of a run, as one: files whose id another file lists as absorbed are dropped
// (a resume merged them and was stopped before deleting them), the rest must hold disjoint shots
// (InputError otherwise) and are summed. `paths` name the files in messages. The result has a new
// id and absorbs every id seen.
MigrationCheckpoint merge_checkpoints(const std::vector<MigrationCheckpoint>& checkpoints,
                                      const std::vector<std::string>& paths);
// The checkpoints whose sums merge_checkpoints adds, in the order it adds them (the first copied,
// the others added cell by cell): those whose id no checkpoint lists as absorbed. Holders of parts
// of the sums merge their planes so, bit for bit the merged whole's.
std::vector<size_t> checkpoints_to_sum(const std::vector<MigrationCheckpoint>& checkpoints);

} // namespace rtm
