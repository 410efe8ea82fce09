// `rtm`: the reverse-time-migration mini-app. The command line is built in app/cli.cpp; each
// subcommand lives in app/cmd_<name>.cpp.
//
// Exit status: 0 success, 1 a failure while running (e.g. a CUDA error), 2 bad input or options,
// 130/143 a migration or modeling run stopped by SIGINT/SIGTERM after writing its checkpoint.
//
// Under an MPI launcher (mpirun -n 4 rtm migrate ...) the ranks share the shots (docs/parallel.md);
// an error on any rank then ends all of them (MPI_Abort) with the same status.
#include "app/cli.h"
#include "io/provenance.h"
#include "kernels/cpu/denormals.h"
#include "kernels/mpi/mpi_context.h"

int main(int argc, char** argv) {
  const rtm::MpiRuntime mpi(&argc, &argv); // initialises MPI only under an MPI launcher
  rtm::set_provenance_command_line(argc, argv); // recorded in every file written (io/provenance.h)
  // Subnormal floats in a decaying wavefield cost x86 cores a microcode assist per operation; every
  // thread of every rank flushes them to zero (kernels/cpu/denormals.h says why and how).
  rtm::flush_denormals_on_all_threads();
  rtm::app::Cli cli = rtm::app::build_cli();
  return rtm::app::run_cli(cli, argc, argv);
}
