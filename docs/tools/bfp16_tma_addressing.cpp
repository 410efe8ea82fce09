// Host emulation of where bfp16_tma_kernel (kernels/cuda/bfp16_tma.cu) reads every value it decodes:
// for every block of the launch (the ring kernels' 64x16 tiles and z chunks), every plane and every
// decode (the queue fronts, the float tile's halo pieces, p[n-1] and the model16 v2dt2), the
// mantissa's element (from the bulk tensor copy's box: bulk_tensor_copy.cu's tensor of 16-bit
// elements starting at cell (-8, -4, -4), `pitch` wide, zeros outside) and the exponent byte (from
// the ring slot byte the kernel indexes, traced back to the aligned word the copy job of that slot
// row copied, or to a zero fill), checked against the cell the decode stands for. Build and run:
//     g++ -O2 -std=c++17 -I. docs/tools/bfp16_tma_addressing.cpp -o /tmp/bfp16_tma_addressing
//     /tmp/bfp16_tma_addressing 512 512 512 96        # nx ny nz chunk [array start mod 4] [model16]
// (chunk: tma_ring::ring_grid's, 96 at 512^3 and 1024x1024x512 on a 132-SM GPU). It prints the
// decodes of interior cells with a wrong mantissa or exponent (the kernel's defects) and, apart,
// the halo decodes whose exponent came from a zero fill (harmless: a halo mantissa is zero).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "solvers/contracts/grid_layout.h"

using namespace rtm;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s nx ny nz chunk [array start mod 4] [model16 0|1]\n", argv[0]);
    return 2;
  }
  const int nx = std::atoi(argv[1]), ny = std::atoi(argv[2]), nz = std::atoi(argv[3]);
  const int chunk = std::atoi(argv[4]);
  const uint64_t start_mod = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0;
  const bool model16 = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  const GridLayout g = make_layout(nx, ny, nz);
  const int64_t plane_blocks = g.plane / 16;
  // Three exponent arrays at unrelated addresses with the same start mod 4 (the kernel's
  // address_low only keeps the two lowest bits).
  const uint64_t e_cur = 0x700000000000ull + start_mod, e_prev = 0x710000000000ull + start_mod,
                 e_model = 0x720000000000ull + start_mod;
  const int64_t tensor_start = g.index(-8, -4, -4); // the int16 tensor's (0, 0, 0)
  auto interior = [&](int64_t n) {
    const int64_t rel = n - g.offset;
    if (rel < 0) return false;
    const int64_t k = rel / g.plane - 4, j = (rel % g.plane) / g.pitch - 4, i = rel % g.pitch - 4;
    return i >= 0 && i < g.nx && j >= 0 && j < g.ny && k >= 0 && k < g.nz;
  };
  const int blocks_x = (nx + 63) / 64, blocks_y = (ny + 15) / 16, chunks = (nz + chunk - 1) / chunk;
  long decodes = 0, bad_mantissa = 0, bad_exponent = 0, halo_zero_filled = 0;
  for (int bz = 0; bz < chunks; ++bz)
    for (int by = 0; by < blocks_y; ++by)
      for (int bx = 0; bx < blocks_x; ++bx) {
        const int x0 = 64 * bx, y0 = 16 * by, k_begin = bz * chunk;
        const int planes = std::min(k_begin + chunk, nz) - k_begin, p_planes = planes + 8;
        auto block_of = [&](int jj, int kk) { return g.index(x0, jj, kk) >> 4; };
        // copy_exponent_word: the source of word `word` of row `row` of plane n's slot, or false
        // for a zero fill. p: the p box's rows (e_cur); else the cell rows of array `array`.
        auto word_source = [&](bool p, int array, int row, int word, int n, uint64_t& src) {
          const uint64_t e = p ? e_cur : array == 0 ? e_prev : e_model;
          const int jj = p ? y0 - 4 + row : y0 + row;
          const bool inside = p ? jj < g.ny + 4 : jj < g.ny;
          const int blocks = p ? 6 : 4;
          const uint64_t last_word = ((e + uint64_t(g.size / 16)) & ~uint64_t(3)) - 4;
          const uint64_t first_at = e + uint64_t(p ? block_of(jj, k_begin - 4) - 1 : block_of(jj, k_begin)) +
                                    uint64_t(n) * uint64_t(plane_blocks);
          src = (first_at & ~uint64_t(3)) + 4 * uint64_t(word);
          return inside && src <= first_at + uint64_t(blocks - 1) && src <= last_word;
        };
        const uint32_t plane_low = uint32_t(plane_blocks);
        // p_cells(q, r, c, first_low): 4 cells of p plane q, box row r, float tile column c.
        auto p_cells = [&](int q, int r, int c, uint32_t first_low) {
          const int tx = x0 + c + 4, ty = y0 + r, tz = k_begin + q; // tensor coordinates
          const int64_t element = tx < g.pitch && ty < g.ny + 8 && tz < g.nz + 8
                                      ? tensor_start + tx + int64_t(ty) * g.pitch + int64_t(tz) * g.plane
                                      : -1;
          const int byte = int((first_low + uint32_t(q) * plane_low) & 3u) + ((c + 12) >> 4);
          uint64_t src = 0;
          const bool copied = word_source(true, 0, r, byte / 4, q, src);
          const uint64_t exponent_at = src + uint64_t(byte % 4);
          const int cx = x0 - 4 + c, cy = y0 - 4 + r, cz = k_begin - 4 + q;
          ++decodes;
          for (int l = 0; l < 4; ++l) {
            const bool in_layout = cx + l < g.nx + 4 && cy < g.ny + 4 && cz < g.nz + 4;
            const int64_t truth = in_layout ? g.index(cx + l, cy, cz) : -1;
            const bool read_interior = element >= 0 && interior(element + l);
            if (truth < 0 || !interior(truth)) {
              if (read_interior) ++bad_mantissa; // a zero cell read as an interior one
              if (truth >= 0 && !copied) ++halo_zero_filled;
              continue;
            }
            if (element + l != truth) {
              if (++bad_mantissa <= 10)
                std::printf("mantissa: tile (%d,%d) chunk %d plane q %d row %d column %d\n", bx, by, bz, q, r, c);
            }
            if (!copied || exponent_at != e_cur + uint64_t(truth >> 4)) {
              if (++bad_exponent <= 10)
                std::printf("exponent: tile (%d,%d) chunk %d cell (%d,%d,%d)\n", bx, by, bz, cx + l, cy, cz);
            }
          }
        };
        for (int ty = 0; ty < 16; ++ty) // the queue fronts, planes q = 0 .. p_planes - 1
          for (int tx = 0; tx < 16; ++tx) {
            const uint32_t first = uint32_t(e_cur) + uint32_t(block_of(y0 + ty, k_begin - 4) - 1);
            for (int q = 0; q < p_planes; ++q) p_cells(q, ty + 4, 4 + 4 * tx, first);
          }
        for (int job = 0; job < 32 + 128; ++job) { // the halo pieces, planes q = m + 4
          int at;
          if (job < 32) {
            at = (job / 2 + 4) * 72 + (job % 2 ? 68 : 0);
          } else {
            const int rr = (job - 32) / 16, c4 = (job - 32) % 16;
            at = (rr < 4 ? rr : 16 + rr) * 72 + 4 + 4 * c4;
          }
          const int row = at / 72, column = at % 72;
          const uint32_t first = uint32_t(e_cur) + uint32_t(block_of(y0 - 4 + row, k_begin - 4) - 1);
          for (int m = 0; m < planes; ++m) p_cells(m + 4, row, column, first);
        }
        for (int ty = 0; ty < 16; ++ty) // p[n-1] (array 0) and the model16 v2dt2 (array 1)
          for (int tx = 0; tx < 16; ++tx) {
            const int x = x0 + 4 * tx, j = y0 + ty;
            if (!(x < nx && j < ny)) continue;
            for (int array = 0; array < (model16 ? 2 : 1); ++array) {
              const uint64_t e = array ? e_model : e_prev;
              const uint32_t first = uint32_t(e) + uint32_t(block_of(j, k_begin));
              for (int m = 0; m < planes; ++m) {
                const int k = k_begin + m;
                const int64_t element =
                    tensor_start + (x0 + 8 + 4 * tx) + int64_t(y0 + 4 + ty) * g.pitch + int64_t(k + 4) * g.plane;
                const int64_t truth = g.index(x, j, k);
                ++decodes;
                if (element != truth) ++bad_mantissa;
                const int byte = (tx >> 2) + int((first + uint32_t(m) * plane_low) & 3u);
                uint64_t src = 0;
                const bool copied = word_source(false, array, ty, byte / 4, m, src);
                if (!copied || src + uint64_t(byte % 4) != e + uint64_t(truth >> 4)) {
                  if (++bad_exponent <= 10)
                    std::printf("cell exponent: array %d tile (%d,%d) chunk %d cell (%d,%d,%d)\n", array, bx, by, bz, x, j, k);
                }
              }
            }
          }
      }
  std::printf("%dx%dx%d, chunk %d, arrays start %llu mod 4: %ld decodes of 4 cells; interior cells with a "
              "wrong mantissa %ld, a wrong exponent %ld; halo cells decoded with a zero-filled exponent %ld\n",
              nx, ny, nz, chunk, (unsigned long long)start_mod, decodes, bad_mantissa, bad_exponent,
              halo_zero_filled);
  return bad_mantissa || bad_exponent ? 1 : 0;
}
