#include "solvers/drivers/checkpoint_writer.h"

#include <chrono>
#include <utility>

namespace rtm {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

BackgroundCheckpointWriter::~BackgroundCheckpointWriter() {
  if (pending_.valid()) pending_.wait();
}

double BackgroundCheckpointWriter::start(std::string path, MigrationCheckpoint checkpoint,
                                         std::unique_ptr<ImageSnapshot> sums) {
  const double waited = finish();
  pending_ = std::async(std::launch::async, [path = std::move(path), c = std::move(checkpoint),
                                             sums = std::move(sums)]() mutable {
    if (sums) {
      ImageSnapshot::Sums taken = sums->take();
      sums.reset(); // its host buffers free for the next snapshot before the write
      c.raw_image = std::move(taken.image);
      c.illumination = std::move(taken.illumination);
    }
    write_checkpoint(path, c);
  });
  return waited;
}

double BackgroundCheckpointWriter::finish() {
  if (!pending_.valid()) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  std::future<void> done = std::move(pending_);
  done.get(); // rethrows the write's error
  return seconds_since(start);
}

} // namespace rtm
