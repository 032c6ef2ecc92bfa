// The confinement a candidate's worker puts itself under before it loads the candidate: resource
// limits, Landlock and a seccomp allowlist (docs/security.md); and the Landlock ruleset its build
// runs under. kbench's side of the sandbox (the namespaces, the scrubbed environment, the private
// directory) is in worker_process.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbench::sandbox {

// Exit status of a worker that made a forbidden system call. Before exiting, it writes
// "kbench-sandbox: forbidden system call <number>" to its log (stderr), which kbench names.
constexpr int kExitForbiddenSyscall = 71;
constexpr const char* kViolationPrefix = "kbench-sandbox: forbidden system call ";

struct Limits {
  long long address_space_mb = 0;  // RLIMIT_AS; 0 leaves it unlimited
  long long cpu_seconds = 0;       // RLIMIT_CPU over the worker's life; 0 leaves it unlimited
  int threads = 1;                 // the thread budget, from which RLIMIT_NPROC is sized
};

// The layers a worker installs on itself, as bits of the report it sends kbench before it loads
// the candidate (so no candidate code has run yet that could forge it).
enum Layer : std::uint32_t {
  kSeccomp = 1u << 0,
  kLandlockFiles = 1u << 1,
  kLandlockNetwork = 1u << 2,   // Landlock ABI 4
  kLandlockSignals = 1u << 3,   // Landlock ABI 6: signals and abstract sockets stay inside
  kUnprivilegedUser = 1u << 4,  // dropped from root to a user of its own
  kResourceLimits = 1u << 5,
};

struct Applied {
  std::uint32_t layers = 0;   // installed
  std::uint32_t missing = 0;  // wanted but refused by this kernel or user
  int landlock_abi = 0;       // 0: no Landlock
};

// The names of the layers in `bits` ("seccomp", "landlock_files", ...), and for `missing` bits one
// line each on why ("landlock_files: the kernel has no Landlock (ABI 0)").
std::vector<std::string> layer_names(std::uint32_t bits);
std::vector<std::string> missing_reasons(const Applied& applied);

// Core dumps off, file size (the log) capped, descriptors, address space and CPU time bounded.
void limit_resources(const Limits& limits, Applied& applied);

// Landlock: reads and execution only beneath the system's library and configuration trees, the
// project-local `library_dir` (oneMKL's, "" for none) and the candidate's shared object
// (`shared_object_fd`), no writes anywhere, no TCP, no signals or
// abstract sockets beyond this process. Missing from the kernel: recorded in `applied.missing`.
void restrict_filesystem(int shared_object_fd, const std::string& library_dir, Applied& applied);

// A Landlock ruleset for another process, the candidate's build: reading and executing beneath
// each of `readable` (directories or files), everything but special files beneath `writable`, no
// TCP. Returns its descriptor, for landlock_restrict_self in that process before it executes the
// build, or -1 with the reason in `why_not` (no Landlock in this kernel, a refused rule).
int build_ruleset(const std::vector<std::string>& readable, const std::string& writable,
                  std::string& why_not);

// The seccomp allowlist, inherited by every thread: what compute kernels need succeeds, what would
// reach outside the worker (sockets, exec, new processes, ptrace, writes to the file system,
// signals to others, namespaces, io_uring, ...) ends the worker with kExitForbiddenSyscall, and
// anything else fails with EPERM. Throws if the filter cannot be installed: a candidate never runs
// without it.
// `control_fd` is kbench's channel: it may be used, never closed, shut down or replaced.
void install_syscall_filter(int control_fd, Applied& applied);

// A user and group id of its own for each process kbench, as root, runs unprivileged (a worker, a
// build), from worker::kSandboxIdBase's range, which no account uses: kbench's pid spreads
// concurrent kbench processes over the range, a counter spreads the processes of one.
unsigned next_sandbox_id();

// Whether kbench's user namespace maps that whole range, user and group ids alike: the initial
// namespace maps every id, a rootless container only a few, and a process cannot become an id its
// namespace does not map. Where it does not, root's workers and builds keep kbench's user.
bool sandbox_ids_mapped();

// Why a worker or a build of this kbench keeps kbench's user: kbench is not root, or its user
// namespace maps no id of the range.
std::string why_no_user_of_its_own();

// The name of system call `number` on this architecture ("socket"), or "#<number>".
std::string syscall_name(int number);

}  // namespace kbench::sandbox
