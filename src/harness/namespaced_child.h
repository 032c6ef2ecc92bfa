// Children of kbench that become another program: the candidate's worker and the confined tools of
// its build. Both start by clone(2) in new PID and network namespaces where the kernel allows, and
// prepare themselves for execve from a copy of a possibly multithreaded kbench.
#pragma once

#include <sys/types.h>

#include <string>

namespace kbench {

// Starts `child(arg)` on a stack of its own (no shared memory: it runs on a copy) in new PID and
// network namespaces; without root, inside a user namespace of its own as well, which is what lets
// an unprivileged process make the other two. Where the kernel refuses the namespaces, or
// `namespaces` is false, the child starts without them and `refused` says why ("clone refused it
// (...)"; empty when they were made). Returns the pid, or -1 with errno set.
pid_t clone_namespaced(int (*child)(void*), void* arg, std::string& refused,
                       bool namespaces = true);

// Maps kbench's user and group onto themselves in the user namespace of `pid`, a child started by
// clone_namespaced without root, so that files it creates are kbench's user's (unmapped, creating
// one fails with EOVERFLOW). The child must have called execve since the clone: until then it is a
// copy of kbench, which is not dumpable, so the kernel gives its /proc files to root and an
// unprivileged kbench cannot write them.
bool map_own_ids(pid_t pid);

// In a cloned child about to execve (async-signal-safe): every signal unblocked and back at its
// default action (kbench ignores SIGPIPE), and a process group of its own, so that one signal
// reaches everything it will start.
void reset_signals_and_group();

}  // namespace kbench
