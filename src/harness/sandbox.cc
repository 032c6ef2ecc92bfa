// The worker's self-confinement: rlimits, Landlock rulesets and the seccomp allowlist (libseccomp);
// and the Landlock ruleset of the candidate's build (harness/confined_command.cc).
#include "harness/sandbox.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/worker_protocol.h"

namespace kbench::sandbox {
namespace {

// ---- Landlock, through raw system calls: Debian 12's headers predate ABI 4-6, whose fields and
// flags are spelled out here as the kernel's UAPI defines them.
constexpr std::uint64_t kFsExecute = 1ull << 0, kFsWriteFile = 1ull << 1, kFsReadFile = 1ull << 2,
                        kFsReadDir = 1ull << 3, kFsRemoveDir = 1ull << 4, kFsRemoveFile = 1ull << 5,
                        kFsMakeChar = 1ull << 6, kFsMakeDir = 1ull << 7, kFsMakeReg = 1ull << 8,
                        kFsMakeSock = 1ull << 9, kFsMakeFifo = 1ull << 10,
                        kFsMakeBlock = 1ull << 11, kFsMakeSym = 1ull << 12,
                        kFsRefer = 1ull << 13,                                           // ABI 2
    kFsTruncate = 1ull << 14,                                                            // ABI 3
    kFsIoctlDev = 1ull << 15;                                                            // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;             // ABI 4
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1;  // ABI 6
constexpr unsigned kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;  // ABI 4
  std::uint64_t scoped = 0;              // ABI 6
};
struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

// Trees a compute kernel reads: shared libraries, the loader's cache and configuration, CPU and
// memory topology (/sys, /proc), /dev/null and /dev/urandom. No /tmp, no /home, no /root: the
// store, the compile cache and any key file stay out of reach even where the worker keeps kbench's
// user (docs/security.md).
constexpr std::array<const char*, 8> kReadableTrees = {"/usr",  "/lib", "/lib64", "/etc",
                                                       "/proc", "/sys", "/dev",   "/opt"};

// ---- seccomp

// The open(2) flags that create or modify a file: opening with any of them ends the worker.
constexpr scmp_datum_t kWriteOpenFlags =
    O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE;

// System calls compute code makes (glibc, libgomp, OpenBLAS, oneDNN's JIT, Highway), allowed as is.
constexpr std::array kAllowed = {
    // memory
    SCMP_SYS(brk),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(mprotect),
    SCMP_SYS(madvise),
    SCMP_SYS(mincore),
    SCMP_SYS(msync),
    SCMP_SYS(mlock),
    SCMP_SYS(mlock2),
    SCMP_SYS(munlock),
    SCMP_SYS(mbind),
    SCMP_SYS(get_mempolicy),
    SCMP_SYS(set_mempolicy),
    SCMP_SYS(pkey_alloc),
    SCMP_SYS(pkey_free),
    SCMP_SYS(pkey_mprotect),
    SCMP_SYS(membarrier),
    // threads and synchronization
    SCMP_SYS(futex),
    SCMP_SYS(futex_waitv),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(get_robust_list),
    SCMP_SYS(set_tid_address),
    SCMP_SYS(rseq),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(sched_getparam),
    SCMP_SYS(sched_getscheduler),
    SCMP_SYS(sched_getattr),
    SCMP_SYS(sched_get_priority_max),
    SCMP_SYS(sched_get_priority_min),
    SCMP_SYS(sched_rr_get_interval),
    SCMP_SYS(getcpu),
    SCMP_SYS(arch_prctl),
    SCMP_SYS(prctl),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(wait4),
    SCMP_SYS(waitid),
    // time
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(nanosleep),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(timer_create),
    SCMP_SYS(timer_settime),
    SCMP_SYS(timer_gettime),
    SCMP_SYS(timer_getoverrun),
    SCMP_SYS(timer_delete),
    SCMP_SYS(setitimer),
    SCMP_SYS(getitimer),
    SCMP_SYS(alarm),
    SCMP_SYS(timerfd_create),
    SCMP_SYS(timerfd_settime),
    SCMP_SYS(timerfd_gettime),
    // signals within this process (kill and tgkill are restricted below)
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(rt_sigpending),
    SCMP_SYS(rt_sigsuspend),
    SCMP_SYS(rt_sigtimedwait),
    SCMP_SYS(pause),
    SCMP_SYS(restart_syscall),
    // descriptors it already holds, and reading files
    SCMP_SYS(read),
    SCMP_SYS(pread64),
    SCMP_SYS(readv),
    SCMP_SYS(preadv),
    SCMP_SYS(preadv2),
    SCMP_SYS(write),
    SCMP_SYS(pwrite64),
    SCMP_SYS(writev),
    SCMP_SYS(pwritev),
    SCMP_SYS(pwritev2),
    SCMP_SYS(dup),
    SCMP_SYS(fcntl),
    SCMP_SYS(lseek),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(stat),
    SCMP_SYS(lstat),
    SCMP_SYS(statx),
    SCMP_SYS(statfs),
    SCMP_SYS(fstatfs),
    SCMP_SYS(access),
    SCMP_SYS(faccessat),
    SCMP_SYS(faccessat2),
    SCMP_SYS(readlink),
    SCMP_SYS(readlinkat),
    SCMP_SYS(getcwd),
    SCMP_SYS(getdents64),
    SCMP_SYS(fadvise64),
    SCMP_SYS(pipe2),
    SCMP_SYS(eventfd2),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(select),
    SCMP_SYS(pselect6),
    SCMP_SYS(epoll_create1),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    // the control socket it inherited (no new socket can be made)
    SCMP_SYS(sendto),
    SCMP_SYS(recvfrom),
    SCMP_SYS(sendmsg),
    SCMP_SYS(recvmsg),
    SCMP_SYS(getsockopt),
    SCMP_SYS(getsockname),
    SCMP_SYS(getpeername),
    // identity and machine facts
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(getppid),
    SCMP_SYS(getpgrp),
    SCMP_SYS(getpgid),
    SCMP_SYS(getsid),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(getresuid),
    SCMP_SYS(getresgid),
    SCMP_SYS(getgroups),
    SCMP_SYS(capget),
    SCMP_SYS(uname),
    SCMP_SYS(sysinfo),
    SCMP_SYS(getrusage),
    SCMP_SYS(times),
    SCMP_SYS(getrlimit),
    SCMP_SYS(getpriority),
    SCMP_SYS(umask),
    SCMP_SYS(getrandom),
};

// System calls whose only uses here would reach outside the worker: each ends it, and the verdict
// is `rejected`, naming the call.
constexpr std::array kForbidden = {
    // network and other processes
    SCMP_SYS(socket),
    SCMP_SYS(socketpair),
    SCMP_SYS(connect),
    SCMP_SYS(bind),
    SCMP_SYS(listen),
    SCMP_SYS(accept),
    SCMP_SYS(accept4),
    SCMP_SYS(execve),
    SCMP_SYS(execveat),
    SCMP_SYS(fork),
    SCMP_SYS(vfork),
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
    SCMP_SYS(process_madvise),
    SCMP_SYS(kcmp),
    SCMP_SYS(tkill),
    SCMP_SYS(pidfd_open),
    SCMP_SYS(pidfd_send_signal),
    SCMP_SYS(pidfd_getfd),
    SCMP_SYS(setsid),
    SCMP_SYS(setpgid),
    // the file system
    SCMP_SYS(creat),
    SCMP_SYS(unlink),
    SCMP_SYS(unlinkat),
    SCMP_SYS(rename),
    SCMP_SYS(renameat),
    SCMP_SYS(renameat2),
    SCMP_SYS(mkdir),
    SCMP_SYS(mkdirat),
    SCMP_SYS(rmdir),
    SCMP_SYS(link),
    SCMP_SYS(linkat),
    SCMP_SYS(symlink),
    SCMP_SYS(symlinkat),
    SCMP_SYS(chmod),
    SCMP_SYS(fchmod),
    SCMP_SYS(fchmodat),
    SCMP_SYS(chown),
    SCMP_SYS(fchown),
    SCMP_SYS(lchown),
    SCMP_SYS(fchownat),
    SCMP_SYS(truncate),
    SCMP_SYS(mknod),
    SCMP_SYS(mknodat),
    SCMP_SYS(memfd_create),
    SCMP_SYS(memfd_secret),
    SCMP_SYS(name_to_handle_at),
    SCMP_SYS(open_by_handle_at),
    // the system
    SCMP_SYS(mount),
    SCMP_SYS(umount2),
    SCMP_SYS(pivot_root),
    SCMP_SYS(chroot),
    SCMP_SYS(setns),
    SCMP_SYS(unshare),
    SCMP_SYS(mount_setattr),
    SCMP_SYS(move_mount),
    SCMP_SYS(open_tree),
    SCMP_SYS(fsopen),
    SCMP_SYS(fsconfig),
    SCMP_SYS(fsmount),
    SCMP_SYS(fspick),
    SCMP_SYS(io_uring_setup),
    SCMP_SYS(io_uring_enter),
    SCMP_SYS(io_uring_register),
    SCMP_SYS(bpf),
    SCMP_SYS(perf_event_open),
    SCMP_SYS(userfaultfd),
    SCMP_SYS(keyctl),
    SCMP_SYS(add_key),
    SCMP_SYS(request_key),
    SCMP_SYS(init_module),
    SCMP_SYS(finit_module),
    SCMP_SYS(delete_module),
    SCMP_SYS(kexec_load),
    SCMP_SYS(kexec_file_load),
    SCMP_SYS(reboot),
    SCMP_SYS(swapon),
    SCMP_SYS(swapoff),
    SCMP_SYS(acct),
    SCMP_SYS(iopl),
    SCMP_SYS(ioperm),
    SCMP_SYS(fanotify_init),
};

// Async-signal-safe: writes the violation to the log and ends the worker. Installed before any
// candidate code runs; the filter refuses to let the candidate replace it.
void on_forbidden_syscall(int, siginfo_t* info, void*) {
  char line[96];
  const char* prefix = kViolationPrefix;
  std::size_t n = 0;
  while (*prefix && n < sizeof line - 16) line[n++] = *prefix++;
  unsigned number = static_cast<unsigned>(info->si_syscall);
  char digits[12];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + number % 10);
    number /= 10;
  } while (number && d < 11);
  while (d > 0) line[n++] = digits[--d];
  line[n++] = '\n';
  [[maybe_unused]] const ssize_t ignored = write(STDERR_FILENO, line, n);
  _exit(kExitForbiddenSyscall);
}

void add_rule(scmp_filter_ctx filter, std::uint32_t action, int syscall, unsigned count = 0,
              scmp_arg_cmp a = {}, scmp_arg_cmp b = {}) {
  const int rc = count == 0   ? seccomp_rule_add(filter, action, syscall, 0)
                 : count == 1 ? seccomp_rule_add(filter, action, syscall, 1, a)
                              : seccomp_rule_add(filter, action, syscall, 2, a, b);
  // -EEXIST/-EDOM can only come from this file's tables; an unknown call on this kernel's headers
  // (negative pseudo-number) is skipped by libseccomp itself.
  if (rc != 0 && rc != -EACCES)
    throw std::runtime_error("seccomp rule for " + syscall_name(syscall) + ": " +
                             std::strerror(-rc));
}

}  // namespace

void limit_resources(const Limits& limits, Applied& applied) {
  const auto set = [](int resource, rlim_t value) {
    const rlimit limit{value, value};
    return setrlimit(resource, &limit) == 0;
  };
  bool ok = set(RLIMIT_CORE, 0);
  // Bounds the log a chatty candidate can write (SIGXFSZ ends it beyond that) and, with no file
  // writable by path, all it can put on a disk.
  ok = set(RLIMIT_FSIZE, 64ull << 20) && ok;
  ok = set(RLIMIT_NOFILE, 256) && ok;
  if (limits.address_space_mb > 0)
    ok = set(RLIMIT_AS, static_cast<rlim_t>(limits.address_space_mb) << 20) && ok;
  if (limits.cpu_seconds > 0) ok = set(RLIMIT_CPU, static_cast<rlim_t>(limits.cpu_seconds)) && ok;
  (ok ? applied.layers : applied.missing) |= kResourceLimits;
}

namespace {

// A ruleset handling every file-system right this kernel's Landlock knows, TCP bind and connect
// (ABI 4) and, when `scoped`, signals and abstract sockets (ABI 6); -1 where there is no Landlock.
int new_ruleset(long abi, bool scoped) {
  if (abi < 1) return -1;
  RulesetAttr attr;
  attr.handled_access_fs = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir |
                           kFsRemoveFile | kFsMakeChar | kFsMakeDir | kFsMakeReg | kFsMakeSock |
                           kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
  std::size_t attr_size = sizeof attr.handled_access_fs;
  if (abi >= 2) attr.handled_access_fs |= kFsRefer;
  if (abi >= 3) attr.handled_access_fs |= kFsTruncate;
  if (abi >= 5) attr.handled_access_fs |= kFsIoctlDev;
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    attr_size = offsetof(RulesetAttr, scoped);
  }
  if (abi >= 6 && scoped) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    attr_size = sizeof attr;
  }
  return static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
}

// Grants `access` beneath `fd` (a directory, or a file for the file rights alone).
bool allow(int ruleset, int fd, std::uint64_t access) {
  PathBeneathAttr rule{access, fd};
  return syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0) == 0;
}

// Grants reading (and executing) beneath `path`, a directory or a file; a path that does not exist
// grants nothing and is no error (/lib64 or /opt may not exist).
bool allow_reading(int ruleset, const std::string& path) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return true;
  struct stat st {};
  const bool directory = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  const bool ok = allow(ruleset, fd, kFsExecute | kFsReadFile | (directory ? kFsReadDir : 0));
  close(fd);
  return ok;
}

long landlock_abi() {
  return syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
}

}  // namespace

void restrict_filesystem(int shared_object_fd, const std::string& library_dir, Applied& applied) {
  const long abi = landlock_abi();
  const std::uint32_t wanted = kLandlockFiles | kLandlockNetwork | kLandlockSignals;
  if (abi >= 1) applied.landlock_abi = static_cast<int>(abi);
  const int ruleset = new_ruleset(abi, /*scoped=*/true);
  if (ruleset < 0) {
    applied.missing |= wanted;
    return;
  }
  bool ok = true;
  std::vector<std::string> trees(kReadableTrees.begin(), kReadableTrees.end());
  if (!library_dir.empty()) trees.push_back(library_dir);
  for (const std::string& tree : trees) ok = allow_reading(ruleset, tree) && ok;
  if (shared_object_fd >= 0) ok = allow(ruleset, shared_object_fd, kFsExecute | kFsReadFile) && ok;
  ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
       syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  close(ruleset);
  if (!ok) {
    applied.missing |= wanted;
    return;
  }
  applied.layers |= kLandlockFiles;
  (abi >= 4 ? applied.layers : applied.missing) |= kLandlockNetwork;
  (abi >= 6 ? applied.layers : applied.missing) |= kLandlockSignals;
}

int build_ruleset(const std::vector<std::string>& readable, const std::string& writable,
                  std::string& why_not) {
  const long abi = landlock_abi();
  const int ruleset = new_ruleset(abi, /*scoped=*/false);
  if (ruleset < 0) {
    why_not = abi < 1 ? "the kernel has no Landlock (ABI " + std::to_string(abi < 0 ? 0 : abi) + ")"
                      : std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return -1;
  }
  bool ok = true;
  for (const std::string& path : readable) ok = allow_reading(ruleset, path) && ok;
  std::uint64_t everything = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir |
                             kFsRemoveFile | kFsMakeDir | kFsMakeReg;
  if (abi >= 3) everything |= kFsTruncate;
  const int dir = open(writable.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (dir < 0) {
    why_not = "cannot open " + writable + ": " + std::strerror(errno);
  } else {
    ok = allow(ruleset, dir, everything) && ok;
    close(dir);
    if (!ok) why_not = std::string("landlock_add_rule: ") + std::strerror(errno);
  }
  if (!why_not.empty()) {
    close(ruleset);
    return -1;
  }
  return ruleset;
}

void install_syscall_filter(int control_fd, Applied& applied) {
  struct sigaction action {};
  action.sa_sigaction = on_forbidden_syscall;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSYS, &action, nullptr) != 0)
    throw std::runtime_error("cannot install the SIGSYS handler");

  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);  // lets an unprivileged process install a filter
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!filter) throw std::runtime_error("cannot create the seccomp filter");
  try {
    for (int call : kAllowed) add_rule(filter, SCMP_ACT_ALLOW, call);
    for (int call : kForbidden) add_rule(filter, SCMP_ACT_TRAP, call);

    // Threads, not processes: clone must carry CLONE_THREAD. clone3 passes its flags in memory,
    // which a filter cannot read, so it reports ENOSYS and glibc falls back to clone.
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(clone), 1,
             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    add_rule(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));

    // Files open for reading only; any flag that writes or creates ends the worker.
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
             SCMP_A2(SCMP_CMP_MASKED_EQ, kWriteOpenFlags, 0));
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
             SCMP_A1(SCMP_CMP_MASKED_EQ, kWriteOpenFlags, 0));
    for (scmp_datum_t flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE}) {
      add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
      add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    add_rule(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2));  // its flags are in memory too

    // kbench's channel stays whole: closing the control socket, shutting it down or duplicating
    // another descriptor onto it ends the worker (the worker itself never does; its exit does).
    const auto channel = static_cast<scmp_datum_t>(control_fd);
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(close), 1, SCMP_A0(SCMP_CMP_NE, channel));
    add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(close), 1, SCMP_A0(SCMP_CMP_EQ, channel));
    for (int call : {SCMP_SYS(dup2), SCMP_SYS(dup3)}) {
      add_rule(filter, SCMP_ACT_ALLOW, call, 1, SCMP_A1(SCMP_CMP_NE, channel));
      add_rule(filter, SCMP_ACT_TRAP, call, 1, SCMP_A1(SCMP_CMP_EQ, channel));
    }
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(close_range), 1, SCMP_A0(SCMP_CMP_GT, channel));
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(close_range), 1, SCMP_A1(SCMP_CMP_LT, channel));
    add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(close_range), 2, SCMP_A0(SCMP_CMP_LE, channel),
             SCMP_A1(SCMP_CMP_GE, channel));
    add_rule(filter, SCMP_ACT_TRAP, SCMP_SYS(shutdown));

    // Signals only to itself: the pid is this process's own (1 in its PID namespace).
    const auto self = static_cast<scmp_datum_t>(getpid());
    for (int call : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                     SCMP_SYS(rt_tgsigqueueinfo)}) {
      add_rule(filter, SCMP_ACT_ALLOW, call, 1, SCMP_A0(SCMP_CMP_EQ, self));
      add_rule(filter, SCMP_ACT_TRAP, call, 1, SCMP_A0(SCMP_CMP_NE, self));
    }
    // The SIGSYS handler that reports violations stays; other handlers are the candidate's own.
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_NE, SIGSYS));
    // Limits may be read, never raised (setrlimit and prlimit64 with a new value get EPERM).
    add_rule(filter, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
             SCMP_A2(SCMP_CMP_EQ, 0));
    // The CPU set kbench pinned it to is its thread budget: widening it fails (EPERM, the default),
    // as it always has, so a kernel that tries still runs on its granted cores.

    if (seccomp_load(filter) != 0) throw std::runtime_error("cannot load the seccomp filter");
  } catch (...) {
    seccomp_release(filter);
    throw;
  }
  seccomp_release(filter);
  applied.layers |= kSeccomp;
}

unsigned next_sandbox_id() {
  static std::atomic<unsigned> started{0};
  const unsigned long long slot = static_cast<unsigned long long>(getpid()) * 64 + started++;
  return worker::kSandboxIdBase + static_cast<unsigned>(slot % worker::kSandboxIdSpan);
}

namespace {

// Whether the id map at `map_path` ("inside outside count" lines) maps [first, first + count).
bool maps_range(const char* map_path, unsigned long long first, unsigned long long count) {
  std::ifstream map(map_path);
  unsigned long long inside = 0, outside = 0, length = 0;
  while (map >> inside >> outside >> length)
    if (inside <= first && first + count <= inside + length) return true;
  return false;
}

}  // namespace

bool sandbox_ids_mapped() {
  static const bool mapped =
      maps_range("/proc/self/uid_map", worker::kSandboxIdBase, worker::kSandboxIdSpan) &&
      maps_range("/proc/self/gid_map", worker::kSandboxIdBase, worker::kSandboxIdSpan);
  return mapped;
}

std::string why_no_user_of_its_own() {
  return geteuid() != 0 ? "kbench does not run as root"
                        : "kbench's user namespace maps no user id of the sandbox's range";
}

std::string syscall_name(int number) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
  std::string text = name ? std::string(name) : std::string("#").append(std::to_string(number));
  std::free(name);
  return text;
}

std::vector<std::string> layer_names(std::uint32_t bits) {
  static constexpr std::array<std::pair<Layer, const char*>, 6> kNames = {{
      {kSeccomp, "seccomp"},
      {kLandlockFiles, "landlock_files"},
      {kLandlockNetwork, "landlock_network"},
      {kLandlockSignals, "landlock_signals"},
      {kUnprivilegedUser, "unprivileged_user"},
      {kResourceLimits, "resource_limits"},
  }};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames)
    if (bits & bit) names.emplace_back(name);
  return names;
}

std::vector<std::string> missing_reasons(const Applied& applied) {
  std::vector<std::string> reasons;
  for (const std::string& name : layer_names(applied.missing)) {
    std::string why;
    if (name.starts_with("landlock")) {
      why = applied.landlock_abi == 0 ? "the kernel has no Landlock"
                                      : "Landlock ABI " + std::to_string(applied.landlock_abi) +
                                            " lacks it (network needs 4, signal scoping 6)";
    } else if (name == "unprivileged_user") {
      why = why_no_user_of_its_own() + ", so the worker keeps kbench's user";
    } else {
      why = "the kernel refused it";
    }
    reasons.push_back(name + ": " + why);
  }
  return reasons;
}

}  // namespace kbench::sandbox
