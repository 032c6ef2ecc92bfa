// Children of kbench that become another program: the candidate's worker and the confined tools of
// its build. Both start by clone(2) in new PID and network namespaces where the kernel allows, and
// prepare themselves for execve from a copy of a possibly multithreaded kbench.
#pragma once

#include <sys/types.h>

#include <string>

namespace kbench {

// Starts `child(arg)` on a stack of its own (no shared memory: it runs on a copy) in new PID and
// network namespaces; without root, inside a user namespace of its own as well, which is what lets
// an unprivileged process make the other two. With `map_own_ids`, kbench's user and group are
// mapped onto themselves in it, so that files the child creates are kbench's user's (unmapped,
// creating one fails with EOVERFLOW): the child must then wait for a word from kbench before it
// creates any. Where the kernel refuses the namespaces, or the mapping, the child starts without
// them and `refused` says why ("clone refused it (...)"; empty when they were made). Returns the
// pid, or -1 with errno set.
pid_t clone_namespaced(int (*child)(void*), void* arg, bool map_own_ids, std::string& refused);

// In a cloned child about to execve (async-signal-safe): every signal unblocked and back at its
// default action (kbench ignores SIGPIPE), and a process group of its own, so that one signal
// reaches everything it will start.
void reset_signals_and_group();

}  // namespace kbench
