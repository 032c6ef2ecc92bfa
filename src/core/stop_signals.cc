#include "core/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace kbench {
namespace {

// Lock-free atomics: safe to touch from a signal handler.
std::atomic<int> requested{0};
std::atomic<bool> graceful{false};

void say(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_stop_signal(int signal) {
  if (!graceful.load() || requested.load() != 0) {
    // The default action: the process ends as the signal says, and its workers with it (they die
    // with their parent).
    struct sigaction defaults {};
    defaults.sa_handler = SIG_DFL;
    sigaction(signal, &defaults, nullptr);
    raise(signal);
    return;
  }
  requested = signal;
  say(signal == SIGTERM
          ? "\nkbench: SIGTERM: stopping after the evaluation in flight (again to stop now)\n"
          : "\nkbench: SIGINT: stopping after the evaluation in flight (again to stop now)\n");
}

}  // namespace

void install_stop_signals() {
  static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  // Interrupted reads, writes and waits resume: a stop request must not fail the evaluation in
  // flight. (poll and sleeps return early instead; kbench's loops around them retry.)
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void stop_between_units() {
  graceful = true;
}

int stop_signal() {
  return requested.load();
}

const char* stop_signal_name(int signal) {
  return signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "a signal";
}

}  // namespace kbench
