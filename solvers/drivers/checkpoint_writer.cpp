#include "solvers/drivers/checkpoint_writer.h"

#include <chrono>
#include <filesystem>
#include <system_error>
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
  pending_ = std::async(std::launch::async, [this, path = std::move(path), c = std::move(checkpoint),
                                             sums = std::move(sums)]() mutable {
    const auto began = std::chrono::steady_clock::now();
    if (sums) {
      ImageSnapshot::Sums taken = sums->take();
      sums.reset(); // its host buffers free for the next snapshot before the write
      c.raw_image = std::move(taken.image);
      c.illumination = std::move(taken.illumination);
    }
    write_checkpoint(path, c);
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    const std::lock_guard<std::mutex> lock(mutex_);
    ++written_.files;
    written_.seconds += seconds_since(began);
    written_.bytes += ec ? 0 : uint64_t(bytes);
  });
  return waited;
}

BackgroundCheckpointWriter::Written BackgroundCheckpointWriter::written() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

double BackgroundCheckpointWriter::finish() {
  if (!pending_.valid()) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  std::future<void> done = std::move(pending_);
  done.get(); // rethrows the write's error
  return seconds_since(start);
}

} // namespace rtm
