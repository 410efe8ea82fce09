#include "kernels/cpu/denormals.h"

#include <omp.h>

#if defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
#include <pmmintrin.h> // _MM_SET_DENORMALS_ZERO_MODE (SSE3 header; the bit itself exists since SSE2)
#include <xmmintrin.h> // _MM_SET_FLUSH_ZERO_MODE
#define RTM_HAVE_MXCSR 1
#endif

namespace rtm {

void flush_denormals_on_this_thread() {
#ifdef RTM_HAVE_MXCSR
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}

void flush_denormals_on_all_threads() {
  flush_denormals_on_this_thread();
  // Every worker of the pool runs this region (a static team of the default size), so each sets
  // its own register.
#pragma omp parallel
  flush_denormals_on_this_thread();
}

bool denormals_flushed() {
#ifdef RTM_HAVE_MXCSR
  return _MM_GET_FLUSH_ZERO_MODE() == _MM_FLUSH_ZERO_ON &&
         _MM_GET_DENORMALS_ZERO_MODE() == _MM_DENORMALS_ZERO_ON;
#else
  return false;
#endif
}

} // namespace rtm
