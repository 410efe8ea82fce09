// FFTW plans (libfftw3-dev: fftw3 in double, fftw3f in single precision) for the drivers' .cpp
// files; the header includes <fftw3.h>, which rtm_drivers links privately, so nothing outside
// solvers/drivers includes it.
//
// FFTW's planner is not thread-safe (executing a plan is, also on other arrays through the
// new-array fftw_execute_dft_* functions), and the drivers transform on several threads at once
// (the next shot's data phase filter on the prefetch thread beside the migration): every plan is
// made and destroyed under one process-wide lock. FFTW_ESTIMATE in every plan, so the algorithm,
// and with it the results, do not depend on timings measured at planning.
#pragma once

#include <fftw3.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace rtm {

std::mutex& fftw_planner_mutex();

// One plan: `make()` returns it (null where FFTW cannot make one: runtime_error naming `what`).
template <class Plan, void (*Destroy)(Plan)>
class FftwPlanOf {
public:
  template <class Make>
  FftwPlanOf(const std::string& what, Make make) {
    const std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    plan_ = make();
    if (!plan_) throw std::runtime_error(what + ": FFTW could not make a plan");
  }
  ~FftwPlanOf() {
    const std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    Destroy(plan_);
  }
  FftwPlanOf(const FftwPlanOf&) = delete;
  FftwPlanOf& operator=(const FftwPlanOf&) = delete;
  Plan get() const { return plan_; }

private:
  Plan plan_ = nullptr;
};

using FftwPlan = FftwPlanOf<fftw_plan, fftw_destroy_plan>;    // double precision
using FftwfPlan = FftwPlanOf<fftwf_plan, fftwf_destroy_plan>; // single precision

} // namespace rtm
