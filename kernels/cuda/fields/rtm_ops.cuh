// Device operations of reverse time migration (docs/rtm.md) around the wave steps: the boundary
// ring's gather and scatter, box copies between a padded field and a dense array, the imaging
// condition and the Born source term. Each does what the CPU reference (kernels/cpu/cpu_propagator.cpp)
// does, with the same float operations in the same order: products and sums are rounded one at
// a time (no fused multiply-add), so a float32 field gives the reference's values exactly.
//
// Fields are padded arrays (GridLayout) of the given Storage; in half storage every value is
// converted to float on load and rounded to half on store. Dense arrays, images and the Born
// perturbation are float32. Everything runs on `stream` and nothing synchronises.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/imaging_condition.h"
#include "solvers/contracts/offset_gathers.h"
#include "solvers/contracts/propagator.h"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {

// ring[r] = field[index[r]] for r < count; ring holds `storage` elements too (a saved ring is
// restored bit for bit).
void gather_cells(const void* field, const int64_t* index, int64_t count, void* ring,
                  Storage storage, cudaStream_t stream);
// field[index[r]] = ring[r] for r < count.
void scatter_cells(const void* ring, const int64_t* index, int64_t count, void* field,
                   Storage storage, cudaStream_t stream);

// dense[z][y][x] = field over `box` (box.inside(g)), and back.
void pack_box(const GridLayout& g, const Box& box, const void* field, Storage storage,
              float* dense, cudaStream_t stream);
void unpack_box(const GridLayout& g, const Box& box, const float* dense, void* field,
                Storage storage, cudaStream_t stream);

// Over `box`, with S = source and R = receiver (padded fields) and the dense image/illumination:
//   image += (weight * S) * R,   illumination += (weight * S) * S.
void accumulate_image_box(const GridLayout& g, const Box& box, const void* source,
                          const void* receiver, Storage storage, float weight, float* image,
                          float* illumination, cudaStream_t stream);

// The same with any imaging condition (solvers/contracts/imaging_condition.h): cross is
// accumulate_image_box; the others read the previous fields too (separated) and the neighbours
// inside `box` (weights: the wave step's Laplacian, whose spacings the first derivatives take).
void accumulate_condition_box(const GridLayout& g, const Box& box, ImagingCondition condition,
                              const LaplacianWeights& weights, const void* source,
                              const void* source_prev, const void* receiver,
                              const void* receiver_prev, Storage storage, float weight,
                              float* image, float* illumination, cudaStream_t stream);

// The subsurface-offset gathers (solvers/contracts/offset_gathers.h): every value e of `layout`
// gains offset_gather_increment(layout, g, e, S, R, weight), the contract's arithmetic that the CPU
// reference runs too, rounded alike. `gathers` dense as the layout says.
void accumulate_offset_gathers(const GridLayout& g, const OffsetGatherLayout& layout,
                               const void* source, const void* receiver, Storage storage,
                               float weight, float* gathers, cudaStream_t stream);

// Over `box`: field += (v2dt2 * m) * background, m dense over the box.
void add_born_source(const GridLayout& g, const Box& box, const void* background,
                     const void* v2dt2, const float* m, void* field, Storage storage,
                     cudaStream_t stream);

} // namespace rtm::cuda
