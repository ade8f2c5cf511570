// install_mapped_file_guard (mapped_file_guard.h): a SIGBUS handler that reports the truncated
// mapped file and exits 2. It may run on any thread, in the middle of anything, so it only
// writes a fixed message and calls _exit (both async-signal-safe).
#include "tools/splice/mapped_file_guard.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace splice::tools {

namespace {

extern "C" void on_sigbus(int) {
  static const char kMessage[] =
      "splice: error: model file changed while in use: a file splice had mapped (the model, an "
      "engine or an input) was truncated while it was read (SIGBUS)\n";
  ssize_t written = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)written;  // nothing more can be done about a failed write here
  _exit(2);
}

}  // namespace

void install_mapped_file_guard() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_sigbus;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

}  // namespace splice::tools
