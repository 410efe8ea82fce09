// A migration's checkpoint files written on a thread of their own, so that the next shot steps
// while the file of the shots before is written (docs/rtm.md, section 11b). The copy of the partial
// sums is started on the loop's thread (ShotFields::snapshot_image: a split propagator assembles
// them collectively there, the others download them there, the CUDA backend only queues the copy);
// the writer's thread waits for the copy (ImageSnapshot::take), fills the checkpoint and writes it.
//
// One write at a time: start() and finish() wait for the write before and rethrow its error, so a
// full disk stops the run at the next checkpoint or at the end, never silently. The files are
// written atomically (h5::write_hdf5_atomically), so a run killed mid-write leaves the checkpoint
// before. HDF5 is not built thread-safe here: nothing else may call it between start() and
// finish() (the shot file is read before the loop and the image written after it).
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "io/checkpoint_file.h"
#include "solvers/contracts/shot_fields.h"

namespace rtm {

class BackgroundCheckpointWriter {
public:
  BackgroundCheckpointWriter() = default;
  BackgroundCheckpointWriter(const BackgroundCheckpointWriter&) = delete;
  BackgroundCheckpointWriter& operator=(const BackgroundCheckpointWriter&) = delete;
  // Waits for a write still running (its error is dropped: the run is already failing).
  ~BackgroundCheckpointWriter();

  // Writes `checkpoint` to `path` on the writer's thread, after the write before has finished.
  // With `sums`, its raw image and illumination are taken from them there first. Returns the
  // seconds spent waiting for the write before.
  double start(std::string path, MigrationCheckpoint checkpoint,
               std::unique_ptr<ImageSnapshot> sums = nullptr);
  // Waits for the write in flight, if any, and rethrows its error. Returns the seconds waited.
  double finish();

  // The files written so far, the one in flight not yet: how many, the seconds the writer's
  // thread spent on them (the snapshot's copy awaited, the file written) and their bytes on disk.
  // Any thread, any time.
  struct Written {
    int files = 0;
    double seconds = 0;
    uint64_t bytes = 0;
  };
  Written written() const;

private:
  std::future<void> pending_;
  mutable std::mutex mutex_; // guards written_, which the writer's thread adds to
  Written written_;
};

} // namespace rtm
