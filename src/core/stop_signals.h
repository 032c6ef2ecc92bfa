// SIGINT and SIGTERM (Ctrl-C, `scancel`, a batch system's time limit) for long commands that stop
// between units of work: the evaluation in flight finishes and is recorded, and the run stays
// resumable, instead of losing that evaluation. A command that cannot stop in between (and any
// second signal) ends the process at once, as without this.
#pragma once

namespace kbench {

// Handles SIGINT and SIGTERM: until stop_between_units() they end the process as before. The
// handler restarts interrupted system calls. Children start with the default actions (exec resets
// them; the workers reset every signal).
void install_stop_signals();

// From now on the first SIGINT or SIGTERM asks to stop (stop_signal() returns it) rather than
// ending the process, and says so on stderr; a second one ends it.
void stop_between_units();

// 0, or the signal that asked to stop.
int stop_signal();

// "SIGTERM" or "SIGINT".
const char* stop_signal_name(int signal);

}  // namespace kbench
