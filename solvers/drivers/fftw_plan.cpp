#include "solvers/drivers/fftw_plan.h"

namespace rtm {

std::mutex& fftw_planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

} // namespace rtm
