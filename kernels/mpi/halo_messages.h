// The messages of one halo exchange step, derived from a HaloPlan once for every transport (the
// host MPI one, kernels/mpi/halo_exchange.cpp; the GPU ones, kernels/cuda/halo/halo_exchange_cuda.cu): who
// receives which planes from whom, who sends which, under which tag. Plain C++.
#pragma once

#include <array>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/mpi/halo_exchange.h"

namespace rtm {

// Tags say which way the planes travel: between two neighbours one message goes up and one down,
// and a receive must never take the other one.
constexpr int kHaloTagUp = 1;   // to the rank above (into its ghost planes below)
constexpr int kHaloTagDown = 2; // to the rank below

// One message: HaloPlan::planes whole padded planes, starting at local plane `first_plane`, to or from
// `peer` (a rank of HaloPlan::comm).
struct HaloMessage {
  int first_plane = 0;
  int peer = -1;
  int tag = 0;
};

// At most one message per neighbour and direction.
struct HaloMessageList {
  std::array<HaloMessage, 2> items{};
  int count = 0;

  const HaloMessage& operator[](int m) const { return items[size_t(m)]; }
  int size() const { return count; }
  const HaloMessage* begin() const { return items.data(); }
  const HaloMessage* end() const { return items.data() + count; }
  void add(const HaloMessage& message) { items[size_t(count++)] = message; }
};

struct HaloMessages {
  HaloMessageList receives, sends;
};

// Below first, then above; a rank without a neighbour on one side has no message there.
inline HaloMessages halo_messages(const HaloPlan& plan) {
  HaloMessages m;
  if (plan.rank_below >= 0) {
    m.receives.add({plan.recv_below, plan.rank_below, kHaloTagUp});
    m.sends.add({plan.send_below, plan.rank_below, kHaloTagDown});
  }
  if (plan.rank_above >= 0) {
    m.receives.add({plan.recv_above, plan.rank_above, kHaloTagDown});
    m.sends.add({plan.send_above, plan.rank_above, kHaloTagUp});
  }
  return m;
}

// A message's size as MPI's int count of bytes; a larger message throws, naming the transport.
inline int halo_message_bytes(size_t bytes, const std::string& transport) {
  if (bytes > size_t(INT_MAX))
    throw std::runtime_error("halo exchange (" + transport + "): a message of " +
                             std::to_string(bytes) + " bytes exceeds MPI's int count");
  return int(bytes);
}

} // namespace rtm
