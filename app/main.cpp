// `rtm`: the reverse-time-migration mini-app. The command line is built in app/cli.cpp; each
// subcommand lives in app/cmd_<name>.cpp.
//
// Exit status: 0 success, 1 a failure while running (e.g. a CUDA error), 2 bad input or options.
#include "app/cli.h"

int main(int argc, char** argv) {
  rtm::app::Cli cli = rtm::app::build_cli();
  return rtm::app::run_cli(cli, argc, argv);
}
