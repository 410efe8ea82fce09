// Halo transports for wavefields in GPU memory (kernels/mpi/halo_exchange.h):
//
//   nccl            ncclSend/ncclRecv between device buffers on a stream of their own; the host
//                   never waits (MPI only bootstraps the NCCL communicator).
//   mpi-cuda-aware  device pointers straight to MPI, where the library says it takes them
//                   (MPIX_Query_cuda_support).
//   mpi-staged      device -> pinned host -> MPI -> pinned host -> device; works with any MPI.
//
// In each, the messages leave once the edge planes are computed and arrive in the ghost planes
// while the interior planes are computed (the wavefield's stream runs the interior kernel
// meanwhile); the step's next kernel waits for them. A message is HaloPlan::planes whole planes of
// the field being computed: kHalo for the acoustic step, kTtiRing = 8 for the TTI step, whose
// (p, q) planes alternate (tti_layout), so its planes carry both fields.
#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#ifdef RTM_HAVE_NCCL
#include <nccl.h>
#endif

#include <array>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_shot_fields.cuh"
#include "kernels/cuda/tti/cuda_tti_shot_fields.cuh"
#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"
#include "kernels/cuda/halo_exchange_cuda.h"
#include "kernels/mpi/halo_messages.h"

namespace rtm::cuda {
namespace {

void mpi_check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("halo exchange: ") + what + " failed");
}

// What every GPU transport shares: the plan's messages (kernels/mpi/halo_messages.h), the
// wavefield's stream (every operation on the field is queued there), and an event marking "edge
// planes computed" on it. Any GPU wavefield whose next_field_planes are device memory: the
// acoustic CudaWavefield or the TTI CudaTtiWavefield.
class GpuExchange : public HaloExchange {
public:
  GpuExchange(Wavefield& local, cudaStream_t stream, const HaloPlan& plan)
      : local_(local), plan_(plan), stream_(stream), messages_(halo_messages(plan)) {
    if (plan.planes < 1) throw std::logic_error("GPU halo exchange: a message needs at least one plane");
    const PlaneSpan probe = local.next_field_planes(0, plan.planes);
    if (probe.device < 0 || stream_ == nullptr)
      throw std::logic_error("GPU halo exchange: the wavefield is not in GPU memory");
    device_ = probe.device;
    bytes_ = probe.bytes;
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventCreateWithFlags(&edges_done_, cudaEventDisableTiming));
  }
  ~GpuExchange() override { cudaEventDestroy(edges_done_); }

protected:
  void* planes(const HaloMessage& m) {
    return local_.next_field_planes(m.first_plane, m.first_plane + plan_.planes).data;
  }
  int message_bytes() const { return halo_message_bytes(bytes_, name()); }

  Wavefield& local_;
  HaloPlan plan_;
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
  size_t bytes_ = 0; // one message: plan_.planes planes
  HaloMessages messages_;
  cudaEvent_t edges_done_ = nullptr;
};

// ---- mpi-staged ----------------------------------------------------------------------------

class StagedExchange final : public GpuExchange {
public:
  StagedExchange(Wavefield& local, cudaStream_t stream, const HaloPlan& plan)
      : GpuExchange(local, stream, plan) {
    for (int m = 0; m < 2; ++m) {
      CUDA_CHECK(cudaMallocHost(&send_host_[size_t(m)], bytes_));
      CUDA_CHECK(cudaMallocHost(&receive_host_[size_t(m)], bytes_));
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied_out_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied_in_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(copied_in_, stream_)); // "nothing to wait for" the first time
  }
  ~StagedExchange() override {
    cudaStreamSynchronize(copy_stream_);
    cudaEventSynchronize(copied_in_);
    cudaEventDestroy(copied_in_);
    cudaEventDestroy(copied_out_);
    cudaStreamDestroy(copy_stream_);
    for (int m = 0; m < 2; ++m) {
      cudaFreeHost(send_host_[size_t(m)]);
      cudaFreeHost(receive_host_[size_t(m)]);
    }
  }
  std::string name() const override { return "mpi-staged"; }

  // Edge planes to pinned memory on a copy stream, behind the edge kernels; the interior kernel
  // is queued on the main stream after this returns and runs meanwhile.
  void start() override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventRecord(edges_done_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, edges_done_, 0));
    for (int m = 0; m < messages_.sends.size(); ++m)
      CUDA_CHECK(cudaMemcpyAsync(send_host_[size_t(m)], planes(messages_.sends[m]), bytes_,
                                 cudaMemcpyDeviceToHost, copy_stream_));
    CUDA_CHECK(cudaEventRecord(copied_out_, copy_stream_));
  }

  // The host trades the pinned buffers over MPI while the interior kernel runs, then queues the
  // copies into the ghost planes on the main stream (after the interior, before the next step).
  void finish() override {
    CUDA_CHECK(cudaSetDevice(device_));
    // The last step's copies out of the receive buffers must be done before MPI refills them.
    CUDA_CHECK(cudaEventSynchronize(copied_in_));
    std::array<MPI_Request, 4> requests{};
    int active = 0;
    const int bytes = message_bytes();
    for (int m = 0; m < messages_.receives.size(); ++m)
      mpi_check(MPI_Irecv(receive_host_[size_t(m)], bytes, MPI_BYTE, messages_.receives[m].peer,
                          messages_.receives[m].tag, plan_.comm, &requests[size_t(active++)]),
                "MPI_Irecv");
    CUDA_CHECK(cudaEventSynchronize(copied_out_));
    for (int m = 0; m < messages_.sends.size(); ++m)
      mpi_check(MPI_Isend(send_host_[size_t(m)], bytes, MPI_BYTE, messages_.sends[m].peer,
                          messages_.sends[m].tag, plan_.comm, &requests[size_t(active++)]),
                "MPI_Isend");
    mpi_check(MPI_Waitall(active, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (int m = 0; m < messages_.receives.size(); ++m)
      CUDA_CHECK(cudaMemcpyAsync(planes(messages_.receives[m]), receive_host_[size_t(m)], bytes_,
                                 cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaEventRecord(copied_in_, stream_));
  }

private:
  std::array<void*, 2> send_host_{}, receive_host_{};
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t copied_out_ = nullptr; // edge planes are in the pinned send buffers
  cudaEvent_t copied_in_ = nullptr;  // the pinned receive buffers are in the ghost planes
};

// ---- mpi-cuda-aware --------------------------------------------------------------------------

bool mpi_takes_device_pointers() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

class CudaAwareExchange final : public GpuExchange {
public:
  using GpuExchange::GpuExchange;
  std::string name() const override { return "mpi-cuda-aware"; }
  void start() override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventRecord(edges_done_, stream_));
  }
  // MPI reads and writes device memory itself; the host only waits for the edge kernels first.
  void finish() override {
    CUDA_CHECK(cudaSetDevice(device_));
    std::array<MPI_Request, 4> requests{};
    int active = 0;
    const int bytes = message_bytes();
    for (int m = 0; m < messages_.receives.size(); ++m)
      mpi_check(MPI_Irecv(planes(messages_.receives[m]), bytes, MPI_BYTE, messages_.receives[m].peer,
                          messages_.receives[m].tag, plan_.comm, &requests[size_t(active++)]),
                "MPI_Irecv");
    CUDA_CHECK(cudaEventSynchronize(edges_done_));
    for (int m = 0; m < messages_.sends.size(); ++m)
      mpi_check(MPI_Isend(planes(messages_.sends[m]), bytes, MPI_BYTE, messages_.sends[m].peer,
                          messages_.sends[m].tag, plan_.comm, &requests[size_t(active++)]),
                "MPI_Isend");
    mpi_check(MPI_Waitall(active, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
};

// ---- nccl ------------------------------------------------------------------------------------

#ifdef RTM_HAVE_NCCL
void nccl_check(ncclResult_t result, const char* what) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string("halo exchange (nccl): ") + what + ": " +
                             ncclGetErrorString(result));
}

class NcclExchange final : public GpuExchange {
public:
  NcclExchange(Wavefield& local, cudaStream_t stream, const HaloPlan& plan)
      : GpuExchange(local, stream, plan) {
    // NVLink multicast (NVLS) stays off unless the user set it: on shared hosts it has put GPUs
    // out of service (docs/decomposition.md, "Halo transports").
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    int rank = 0, size = 1;
    MPI_Comm_rank(plan.comm, &rank);
    MPI_Comm_size(plan.comm, &size);
    ncclUniqueId id;
    if (rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    mpi_check(MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, plan.comm), "MPI_Bcast (NCCL id)");
    CUDA_CHECK(cudaSetDevice(device_));
    nccl_check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    // Highest priority: NCCL moves the planes with kernels of its own, which must get SMs while
    // the interior kernel (sized to fill the GPU) runs, not after it.
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
    CUDA_CHECK(cudaEventCreateWithFlags(&arrived_, cudaEventDisableTiming));
  }
  ~NcclExchange() override {
    cudaStreamSynchronize(comm_stream_);
    cudaEventDestroy(arrived_);
    cudaStreamDestroy(comm_stream_);
    ncclCommDestroy(comm_);
  }
  std::string name() const override { return "nccl"; }

  // Queued on the communication stream behind the edge kernels; returns at once.
  void start() override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventRecord(edges_done_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, edges_done_, 0));
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int m = 0; m < messages_.sends.size(); ++m)
      nccl_check(ncclSend(planes(messages_.sends[m]), bytes_, ncclUint8, messages_.sends[m].peer,
                          comm_, comm_stream_),
                 "ncclSend");
    for (int m = 0; m < messages_.receives.size(); ++m)
      nccl_check(ncclRecv(planes(messages_.receives[m]), bytes_, ncclUint8,
                          messages_.receives[m].peer, comm_, comm_stream_),
                 "ncclRecv");
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    CUDA_CHECK(cudaEventRecord(arrived_, comm_stream_));
  }
  // The main stream's next work waits for the ghost planes; the host does not.
  void finish() override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, arrived_, 0));
  }

private:
  ncclComm_t comm_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t arrived_ = nullptr;
};
#endif

} // namespace

std::vector<std::string> halo_transports() {
  std::vector<std::string> names;
#ifdef RTM_HAVE_NCCL
  names.push_back("nccl");
#endif
  if (mpi_takes_device_pointers()) names.push_back("mpi-cuda-aware");
  names.push_back("mpi-staged");
  return names;
}

namespace {

// A GPU transport by name (one of halo_transports()) for `local`, whose operations are queued on
// `stream`; collective over plan.comm.
std::unique_ptr<HaloExchange> make_halo_exchange(const std::string& name, Wavefield& local,
                                                 cudaStream_t stream, const HaloPlan& plan) {
#ifdef RTM_HAVE_NCCL
  if (name == "nccl") return std::make_unique<NcclExchange>(local, stream, plan);
#endif
  if (name == "mpi-cuda-aware" && mpi_takes_device_pointers())
    return std::make_unique<CudaAwareExchange>(local, stream, plan);
  if (name == "mpi-staged") return std::make_unique<StagedExchange>(local, stream, plan);
  throw std::invalid_argument("halo transport '" + name + "' is not available in this build");
}

} // namespace

SlabWavefield make_slab_wavefield(const PropagatorSetup& local, const std::string& variant,
                                  const MemoryOptions& memory, int device, std::ostream* log,
                                  const std::string& transport, const HaloPlan& plan) {
  if (!local.tti.empty()) { // the TTI step: (p, q) planes, kTtiRing of them per message
    auto field = std::make_unique<CudaTtiWavefield>(local, variant, device);
    SlabWavefield slab;
    slab.exchange = make_halo_exchange(transport, *field, field->stream(), plan);
    slab.field = std::move(field);
    return slab;
  }
  std::unique_ptr<CudaWavefield> field = make_cuda_wavefield(local, variant, memory, device, log);
  // Halo planes move raw field memory: bfp16's blocks would need their exponents moved too.
  if (field->variant().storage == Storage::bfp16)
    field->refuse_for_bfp16("z-slab halo exchange (--ranks-per-shot > 1)");
  SlabWavefield slab;
  // On the stream the edge planes are stepped on (CudaWavefield::step_planes_beside).
  slab.exchange = make_halo_exchange(transport, *field, field->beside_stream(), plan);
  slab.field = std::move(field);
  return slab;
}

SlabShotFields make_slab_shot_fields(const PropagatorSetup& local, const std::string& variant,
                                     const MemoryOptions& memory, int device, std::ostream* log,
                                     const std::string& transport, const HaloPlan& plan) {
  SlabShotFields slab;
  if (!local.tti.empty()) {
    CudaTtiShot shot = make_cuda_tti_shot(local, variant, device);
    slab.source_exchange = make_halo_exchange(transport, *shot.source, shot.source->stream(), plan);
    slab.receiver_exchange = make_halo_exchange(transport, *shot.receiver, shot.receiver->stream(), plan);
    slab.fields = std::move(shot.fields);
    return slab;
  }
  std::unique_ptr<CudaShotFields> fields = make_cuda_shot_fields(local, variant, memory, device, log);
  CudaWavefield& source = fields->cuda_source();
  CudaWavefield& receiver = fields->cuda_receiver();
  slab.source_exchange = make_halo_exchange(transport, source, source.beside_stream(), plan);
  slab.receiver_exchange = make_halo_exchange(transport, receiver, receiver.beside_stream(), plan);
  slab.fields = std::move(fields);
  return slab;
}

} // namespace rtm::cuda
