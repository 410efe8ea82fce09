// The host MPI halo transport (kernels/mpi/halo_exchange.h): the CPU backend's wavefields are host
// arrays, so MPI sends from and receives into them directly, with no copies.
#include <array>
#include <stdexcept>
#include <string>

#include "kernels/mpi/halo_exchange.h"
#include "kernels/mpi/halo_messages.h"
#include "kernels/mpi/mpi_context.h"

namespace rtm {
namespace {

class HostMpiExchange final : public HaloExchange {
public:
  HostMpiExchange(Wavefield& local, const HaloPlan& plan)
      : local_(local), plan_(plan), messages_(halo_messages(plan)) {}
  ~HostMpiExchange() override {
    // An exception between start() and finish() must not leave MPI writing into freed memory.
    if (active_ > 0) MPI_Waitall(active_, requests_.data(), MPI_STATUSES_IGNORE);
  }

  std::string name() const override { return "mpi"; }

  void start() override {
    active_ = 0;
    for (const HaloMessage& m : messages_.receives) {
      const PlaneSpan span = planes(m.first_plane);
      MPI_Irecv(span.data, halo_message_bytes(span.bytes, "mpi"), MPI_BYTE, m.peer, m.tag,
                plan_.comm, &requests_[size_t(active_++)]);
    }
    for (const HaloMessage& m : messages_.sends) {
      const PlaneSpan span = planes(m.first_plane);
      MPI_Isend(span.data, halo_message_bytes(span.bytes, "mpi"), MPI_BYTE, m.peer, m.tag,
                plan_.comm, &requests_[size_t(active_++)]);
    }
  }

  void finish() override {
    const int code = MPI_Waitall(active_, requests_.data(), MPI_STATUSES_IGNORE);
    active_ = 0;
    check_mpi(code, "halo exchange (mpi): MPI_Waitall");
  }

private:
  PlaneSpan planes(int first) {
    const PlaneSpan span = local_.next_field_planes(first, first + plan_.planes);
    if (span.device >= 0)
      throw std::logic_error("halo exchange (mpi): the wavefield is in GPU memory; use a GPU transport");
    return span;
  }

  Wavefield& local_;
  HaloPlan plan_;
  HaloMessages messages_;
  std::array<MPI_Request, 4> requests_{};
  int active_ = 0;
};

} // namespace

std::unique_ptr<HaloExchange> make_host_mpi_exchange(Wavefield& local, const HaloPlan& plan) {
  return std::make_unique<HostMpiExchange>(local, plan);
}

} // namespace rtm
