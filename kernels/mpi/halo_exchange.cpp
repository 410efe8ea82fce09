// The host MPI halo transport (kernels/mpi/halo_exchange.h): the CPU backend's wavefields are host
// arrays, so MPI sends from and receives into them directly, with no copies.
#include <array>
#include <stdexcept>
#include <string>

#include "kernels/mpi/halo_exchange.h"
#include "kernels/mpi/mpi_context.h"

namespace rtm {
namespace {

// Message tags: which way the planes travel.
constexpr int kTagUp = 1;   // to the rank above (its ghost planes below)
constexpr int kTagDown = 2; // to the rank below

class HostMpiExchange final : public HaloExchange {
public:
  HostMpiExchange(Wavefield& local, const HaloPlan& plan) : local_(local), plan_(plan) {}
  ~HostMpiExchange() override {
    // An exception between start() and finish() must not leave MPI writing into freed memory.
    if (active_ > 0) MPI_Waitall(active_, requests_.data(), MPI_STATUSES_IGNORE);
  }

  std::string name() const override { return "mpi"; }

  void start() override {
    active_ = 0;
    if (plan_.rank_below >= 0) {
      post_recv(plan_.recv_below, plan_.rank_below, kTagUp);
      post_send(plan_.send_below, plan_.rank_below, kTagDown);
    }
    if (plan_.rank_above >= 0) {
      post_recv(plan_.recv_above, plan_.rank_above, kTagDown);
      post_send(plan_.send_above, plan_.rank_above, kTagUp);
    }
  }

  void finish() override {
    const int code = MPI_Waitall(active_, requests_.data(), MPI_STATUSES_IGNORE);
    active_ = 0;
    check_mpi(code, "halo exchange (mpi): MPI_Waitall");
  }

private:
  PlaneSpan planes(int first) {
    const PlaneSpan span = local_.next_field_planes(first, first + kHalo);
    if (span.device >= 0)
      throw std::logic_error("halo exchange (mpi): the wavefield is in GPU memory; use a GPU transport");
    if (span.bytes > size_t(1) << 31)
      throw std::runtime_error("halo exchange (mpi): a message of " + std::to_string(span.bytes) +
                               " bytes exceeds MPI's int count");
    return span;
  }
  void post_recv(int first, int peer, int tag) {
    const PlaneSpan span = planes(first);
    MPI_Irecv(span.data, int(span.bytes), MPI_BYTE, peer, tag, plan_.comm, &requests_[size_t(active_++)]);
  }
  void post_send(int first, int peer, int tag) {
    const PlaneSpan span = planes(first);
    MPI_Isend(span.data, int(span.bytes), MPI_BYTE, peer, tag, plan_.comm, &requests_[size_t(active_++)]);
  }

  Wavefield& local_;
  HaloPlan plan_;
  std::array<MPI_Request, 4> requests_{};
  int active_ = 0;
};

} // namespace

std::unique_ptr<HaloExchange> make_host_mpi_exchange(Wavefield& local, const HaloPlan& plan) {
  return std::make_unique<HostMpiExchange>(local, plan);
}

} // namespace rtm
