// Flush-to-zero (FTZ) and denormals-are-zero (DAZ) for the threads that step or image a wavefield.
//
// Why: a wavefield decays behind the wavefront and in the absorbing layers; once its values fall
// below 1.2e-38 they become subnormal, and x86 cores take a microcode assist (tens to a hundred
// cycles) for every operation that reads or produces one. A long CPU run then spends most of its
// time on numbers that cannot change a trace: a user measured a 100x60x80 layered `rtm model` at
// 0.06 Gcells/s with subnormals and 0.41 Gcells/s with them flushed, the traces differing by 9e-8;
// on the AMD development machine a step of an all-subnormal field runs 2.2x faster flushed
// (docs/variants.md, "The CPU backend").
// With FTZ/DAZ such values read and are written as zero. Results stay deterministic: every thread
// that computes a wavefield runs in the same mode, so bitwise comparisons between runs still hold.
//
// The mode is a per-thread register (MXCSR on x86): each OpenMP worker has its own. A new thread
// inherits the mode of the thread that creates it (Linux copies the FPU state on clone), so setting
// it on the main thread before a thread pool exists covers that pool; pools that already exist are
// covered by setting it inside a parallel region on every worker. On other architectures these
// functions do nothing and denormals_flushed() reports false.
#pragma once

namespace rtm {

// Sets FTZ and DAZ on the calling thread.
void flush_denormals_on_this_thread();

// Sets FTZ and DAZ on the calling thread and on every worker of its OpenMP thread pool (one
// parallel region with the pool's default size; threads created later inherit the mode).
void flush_denormals_on_all_threads();

// Whether FTZ and DAZ are both set on the calling thread (false where they do not exist).
bool denormals_flushed();

} // namespace rtm
