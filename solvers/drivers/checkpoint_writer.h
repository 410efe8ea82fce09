// A migration's checkpoint files written on a thread of their own, so that the next shot steps
// while the file of the shots before is written (docs/rtm.md, section 11b). The partial sums are
// copied to the host on the loop's thread (the device is shared with the steps, and a split
// propagator assembles them collectively); only the HDF5 write runs beside the steps.
//
// One write at a time: start() and finish() wait for the write before and rethrow its error, so a
// full disk stops the run at the next checkpoint or at the end, never silently. The files are
// written atomically (h5::write_hdf5_atomically), so a run killed mid-write leaves the checkpoint
// before. HDF5 is not built thread-safe here: nothing else may call it between start() and
// finish() (the shot file is read before the loop and the image written after it).
#pragma once

#include <future>
#include <string>

#include "io/checkpoint_file.h"

namespace rtm {

class BackgroundCheckpointWriter {
public:
  BackgroundCheckpointWriter() = default;
  BackgroundCheckpointWriter(const BackgroundCheckpointWriter&) = delete;
  BackgroundCheckpointWriter& operator=(const BackgroundCheckpointWriter&) = delete;
  // Waits for a write still running (its error is dropped: the run is already failing).
  ~BackgroundCheckpointWriter();

  // Writes `checkpoint` to `path` on the writer's thread, after the write before has finished.
  // Returns the seconds spent waiting for that one.
  double start(std::string path, MigrationCheckpoint checkpoint);
  // Waits for the write in flight, if any, and rethrows its error. Returns the seconds waited.
  double finish();

private:
  std::future<void> pending_;
};

} // namespace rtm
