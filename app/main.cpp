// `rtm`: the reverse-time-migration mini-app. The command line is built in app/cli.cpp; each
// subcommand lives in app/cmd_<name>.cpp.
//
// Exit status: 0 success, 1 a failure while running (e.g. a CUDA error), 2 bad input or options,
// 130/143 a migration or modeling run stopped by SIGINT/SIGTERM after writing its checkpoint.
//
// Under an MPI launcher (mpirun -n 4 rtm migrate ...) the ranks share the shots (docs/parallel.md);
// an error on any rank then ends all of them (MPI_Abort) with the same status.
#include "app/cli.h"
#include "solvers/mpi_context.h"

int main(int argc, char** argv) {
  const rtm::MpiRuntime mpi(&argc, &argv); // initialises MPI only under an MPI launcher
  rtm::app::Cli cli = rtm::app::build_cli();
  return rtm::app::run_cli(cli, argc, argv);
}
