// Whether this test is compiled with AddressSanitizer (the sanitized stage of .ci/run,
// docs/robustness.md). Under it the CPU step runs many times slower and memory figures mean
// nothing, so a few tests check less there or run a smaller problem; each says what it keeps.
//   RTM_TEST_UNDER_ASAN   defined (as 1) for the preprocessor, only in such a build
//   test::kUnderAsan      the same as a constant
#pragma once

#if defined(__SANITIZE_ADDRESS__) // GCC
#define RTM_TEST_UNDER_ASAN 1
#elif defined(__has_feature) // clang
#if __has_feature(address_sanitizer)
#define RTM_TEST_UNDER_ASAN 1
#endif
#endif

namespace rtm::test {
#ifdef RTM_TEST_UNDER_ASAN
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif
} // namespace rtm::test
