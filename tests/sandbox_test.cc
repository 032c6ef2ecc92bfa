// The worker's self-confinement, tested in forked children: each installs a layer, tries one
// thing, and reports through its exit status (the seccomp filter ends a forbidden call with
// sandbox::kExitForbiddenSyscall).
#include "harness/sandbox.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "harness/evaluator.h"
#include "proc_support.h"

namespace kbench::sandbox {
namespace {

constexpr int kChildOk = 0;
constexpr int kChannel = 5;  // as in the worker: the descriptor the filter protects
constexpr int kChildFailed = 1;

// Runs `body` in a forked child after `setup`, returning its exit status (or 128 + signal). The
// child leaves with _exit so no atexit handler (or leak checker) runs under the filter.
int in_child(const std::function<void()>& setup, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      setup();
    } catch (...) {
      _exit(99);
    }
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void filtered() {
  // The channel is open in the worker, so no other descriptor can take its number there; here too.
  if (dup2(STDERR_FILENO, kChannel) != kChannel) _exit(97);
  Applied applied;
  install_syscall_filter(kChannel, applied);
  if (!(applied.layers & kSeccomp)) _exit(98);
}

TEST(SyscallFilter, ForbiddenCallsEndTheProcess) {
  const std::vector<std::pair<const char*, std::function<int()>>> attempts = {
      {"socket", [] { return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? kChildOk : kChildFailed; }},
      {"fork", [] { return fork() >= 0 ? kChildOk : kChildFailed; }},
      {"process clone",
       [] { return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) >= 0 ? kChildOk : kChildFailed; }},
      {"execve",
       [] {
         char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
         execve("/bin/true", argv, nullptr);
         return kChildFailed;
       }},
      {"open for writing",
       [] { return open("/tmp/kbench-sandbox-test", O_WRONLY | O_CREAT, 0600) >= 0; }},
      {"open read-write", [] { return open("/dev/null", O_RDWR) >= 0 ? kChildOk : kChildFailed; }},
      {"signal to the parent", [] { return kill(getppid(), 0); }},
      {"signal to every process", [] { return kill(-1, 0); }},
      {"setsid", [] { return static_cast<int>(setsid()); }},
      {"memfd_create", [] { return static_cast<int>(syscall(SYS_memfd_create, "x", 0)); }},
      {"unlink", [] { return unlink("/tmp/kbench-sandbox-test-absent"); }},
      {"ptrace", [] { return static_cast<int>(syscall(SYS_ptrace, 0, 0, 0, 0)); }},
      {"io_uring_setup", [] { return static_cast<int>(syscall(SYS_io_uring_setup, 1, nullptr)); }},
      {"closing the channel", [] { return close(kChannel); }},
      {"replacing the channel", [] { return dup2(STDERR_FILENO, kChannel); }},
      {"closing a range over the channel", [] { return close_range(3, ~0u, 0); }},
      {"shutting the channel down", [] { return shutdown(kChannel, SHUT_RDWR); }},
  };
  for (const auto& [what, attempt] : attempts)
    EXPECT_EQ(in_child(filtered, attempt), kExitForbiddenSyscall) << what;
}

TEST(SyscallFilter, WhatComputeKernelsNeedStillWorks) {
  const int status = in_child(filtered, [] {
    // Threads (clone with CLONE_THREAD, after clone3's ENOSYS), futexes, memory, clocks, files
    // opened for reading, signals to itself.
    std::atomic<int> ran{0};
    std::thread worker([&] { ran = 1; });
    worker.join();
    void* block =
        mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED || mprotect(block, 4096, PROT_READ | PROT_EXEC) != 0) return 2;
    timespec now{};
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 3;
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 4;
    char buf[64];
    if (read(fd, buf, sizeof buf) <= 0) return 5;
    close(fd);
    const int other = dup(STDERR_FILENO);
    if (other < 0 || dup2(STDERR_FILENO, other) != other || close(other) != 0) return 9;
    if (close_range(kChannel + 1, ~0u, 0) != 0) return 10;
    signal(SIGUSR1, SIG_IGN);
    if (raise(SIGUSR1) != 0) return 6;
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0) return 7;
    return ran == 1 ? kChildOk : 8;
  });
  EXPECT_EQ(status, kChildOk);
}

TEST(SyscallFilter, UnlistedCallsFailWithEpermAndLimitsCannotBeRaised) {
  const int status = in_child(filtered, [] {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 || errno != EPERM) return 2;
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(0, &all);
    if (sched_setaffinity(0, sizeof all, &all) == 0 || errno != EPERM) return 3;
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0 || errno != EPERM) return 4;
    // Replacing the handler that reports violations is refused, so they stay reported.
    if (signal(SIGSYS, SIG_DFL) != SIG_ERR) return 5;
    return kChildOk;
  });
  EXPECT_EQ(status, kChildOk);
}

TEST(Landlock, ReadsOnlySystemTreesAndNoTcp) {
  if (!kbench::testing::kernel_has_landlock()) GTEST_SKIP() << "this kernel has no Landlock";
  // A file outside the readable trees, made before the child confines itself.
  char path[] = "/tmp/kbench-landlock-XXXXXX";
  const int made = mkstemp(path);
  ASSERT_GE(made, 0);
  close(made);
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);

  Applied applied;
  const int status = in_child(
      [&] {
        restrict_filesystem(-1, "", applied);
        if (!(applied.layers & kLandlockFiles)) _exit(98);
      },
      [&] {
        if (open(path, O_RDONLY) >= 0 || errno != EACCES) return 2;
        if (open("/etc/passwd", O_RDONLY) < 0) return 3;
        if (open("/etc/kbench-landlock-new", O_WRONLY | O_CREAT, 0600) >= 0) return 4;
        if (!(applied.layers & kLandlockNetwork)) return kChildOk;
        const int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return 5;
        return kChildOk;
      });
  unlink(path);
  close(listener);
  EXPECT_EQ(status, kChildOk);
}

TEST(ResourceLimits, BoundAddressSpaceCpuFilesAndCores) {
  const int status = in_child(
      [] {},
      [] {
        Applied applied;
        limit_resources({.address_space_mb = 512, .cpu_seconds = 30, .threads = 1}, applied);
        rlimit as{}, cpu{}, core{}, fsize{};
        getrlimit(RLIMIT_AS, &as);
        getrlimit(RLIMIT_CPU, &cpu);
        getrlimit(RLIMIT_CORE, &core);
        getrlimit(RLIMIT_FSIZE, &fsize);
        const bool ok = (applied.layers & kResourceLimits) && as.rlim_max == 512ull << 20 &&
                        cpu.rlim_max == 30 && core.rlim_max == 0 && fsize.rlim_max == 64ull << 20;
        return ok ? kChildOk : kChildFailed;
      });
  EXPECT_EQ(status, kChildOk);
}

TEST(SandboxReport, NamesLayersSyscallsAndWhatIsMissing) {
  EXPECT_EQ(syscall_name(SYS_socket), "socket");
  EXPECT_EQ(syscall_name(-5), "#-5");
  EXPECT_EQ(layer_names(kSeccomp | kUnprivilegedUser),
            (std::vector<std::string>{"seccomp", "unprivileged_user"}));
  const Applied old_kernel{kSeccomp | kLandlockFiles, kLandlockNetwork | kLandlockSignals, 3};
  const std::vector<std::string> reasons = missing_reasons(old_kernel);
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_NE(reasons[0].find("Landlock ABI 3"), std::string::npos) << reasons[0];
}

TEST(PhysicalFloor, FlagsOnlyMediansBelowTheRoofline) {
  Utilization util;
  util.roofline_ms = 2.0;
  util.bound = "memory";
  util.peak_gflops = 150;
  util.peak_gbps = 12;
  EXPECT_EQ(below_physical_floor(2.5, util), "");
  EXPECT_EQ(below_physical_floor(2.0, util), "");
  EXPECT_NE(below_physical_floor(1.5, util).find("below the physical floor"), std::string::npos);
  EXPECT_EQ(below_physical_floor(1.5, std::nullopt), "");
  util.roofline_ms = 0;  // roofs not measured
  EXPECT_EQ(below_physical_floor(1.5, util), "");
}

// The baseline beating the floor blames the floor, not an algebraic shortcut.
TEST(PhysicalFloor, ABaselineBelowItBlamesTheFloor) {
  Utilization util;
  util.roofline_ms = 2.0;
  util.bound = "compute";
  EXPECT_EQ(baseline_below_physical_floor(2.0, util), "");
  const std::string blame = baseline_below_physical_floor(1.5, util);
  EXPECT_EQ(blame.find("the baseline's median 1.5 ms is below the physical floor"), 0u) << blame;
  EXPECT_NE(blame.find("kbench bug"), std::string::npos) << blame;
  EXPECT_EQ(blame.find("algebraic shortcut"), std::string::npos) << blame;
  EXPECT_NE(blame.find("kbench probe --force"), std::string::npos) << blame;
  // Peaks measured again beside it leave only the count to blame.
  const std::string count = baseline_below_physical_floor(1.5, util, true);
  EXPECT_NE(count.find("measured again beside it"), std::string::npos) << count;
  EXPECT_EQ(count.find("kbench probe --force"), std::string::npos) << count;
}

}  // namespace
}  // namespace kbench::sandbox
