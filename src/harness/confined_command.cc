// A confined tool: everything is prepared in kbench (paths, the Landlock ruleset, argv and
// environment), then a cloned child applies it with async-signal-safe calls only, since kbench may
// have other threads (the agents' pool builds in several), and executes the tool.
#include "harness/confined_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "core/timer.h"
#include "harness/namespaced_child.h"
#include "harness/open_to_others.h"
#include "harness/sandbox.h"

namespace kbench {
namespace {

// The child does not execute the tool itself: it executes this shell, which executes the tool once
// kbench's go arrives on descriptor 3 (and never, were kbench gone: EOF). Without root, kbench maps
// its user into the child's user namespace in between, which it can do only once the child has
// executed something (until then the child is a copy of kbench, which is not dumpable, so its /proc
// files are root's), and which must be done before the tool creates a file.
constexpr const char* kShell = "/bin/sh";
constexpr const char* kTrampoline = "read -r go <&3 && exec \"$@\" 3<&-";
constexpr int kGoFd = 3;

struct ChildPlan {
  char** argv;  // kShell's: the trampoline, then the tool's path and arguments
  char** envp;
  const char* work_dir;
  int stdin_fd, output_fd;
  int go_read, go_write;      // a line on go_read once kbench has set the child's namespaces up
  int exec_read, exec_write;  // close-on-exec: kbench reads EOF once the child has executed kShell
  int ruleset;                // -1: no Landlock
  rlim_t address_space, file_size, cpu_seconds;
  uid_t user;  // the user and group it runs as, where kbench is root; 0: kbench's own
};

// Writes `what` and exits: the tool's output then says why it never ran.
[[noreturn]] void child_fails(const char* what) {
  const char prefix[] = "kbench: the confined tool could not start: ";
  (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
  (void)!write(STDERR_FILENO, what, std::strlen(what));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(126);
}

int child_main(void* arg) {
  const auto* plan = static_cast<const ChildPlan*>(arg);
  // Dies with kbench, as the worker does: a tool that writes nothing (a long constexpr loop, a
  // sleep) would otherwise run on until its CPU limit. Kept across both execve calls.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  close(plan->go_write);  // so that kbench's end alone keeps the pipe open: were kbench gone, EOF
  close(plan->exec_read);
  reset_signals_and_group();  // without a PID namespace, a kill of the group reaches all it starts
  if (dup2(plan->stdin_fd, STDIN_FILENO) < 0 || dup2(plan->output_fd, STDOUT_FILENO) < 0 ||
      dup2(plan->output_fd, STDERR_FILENO) < 0)
    _exit(126);
  if (chdir(plan->work_dir) != 0) child_fails("chdir to its directory");
  // The object must be readable by the worker's own user, who reopens it through /proc/self/fd,
  // whatever kbench's umask (under 077 every worker failed to load its candidate).
  umask(022);
  const auto limit = [](int resource, rlim_t value) {
    const rlimit both{value, value};
    return setrlimit(resource, &both) == 0;
  };
  if (!limit(RLIMIT_CORE, 0) || (plan->file_size && !limit(RLIMIT_FSIZE, plan->file_size)) ||
      (plan->address_space && !limit(RLIMIT_AS, plan->address_space)) ||
      !limit(RLIMIT_CPU, plan->cpu_seconds))
    child_fails("setrlimit");
  // Raw system calls: glibc's wrappers would signal every thread it believes the process has, and
  // this copy of kbench has kbench's thread list but only one thread. A change of user clears the
  // parent-death signal, so it is set again.
  if (plan->user != 0 && (syscall(SYS_setgroups, 0, nullptr) != 0 ||
                          syscall(SYS_setresgid, plan->user, plan->user, plan->user) != 0 ||
                          syscall(SYS_setresuid, plan->user, plan->user, plan->user) != 0 ||
                          prctl(PR_SET_PDEATHSIG, SIGKILL) != 0))
    child_fails("dropping to a user of its own");
  if (plan->ruleset >= 0 && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                             syscall(SYS_landlock_restrict_self, plan->ruleset, 0) != 0))
    child_fails("landlock_restrict_self");
  // The go moves to kGoFd, open across execve; the exec pipe's end must stay open until then.
  if (plan->exec_write == kGoFd && fcntl(kGoFd, F_DUPFD_CLOEXEC, kGoFd + 1) < 0)
    child_fails("fcntl");
  if (plan->go_read == kGoFd ? fcntl(kGoFd, F_SETFD, 0) != 0 : dup2(plan->go_read, kGoFd) < 0)
    child_fails("dup2");
  execve(kShell, plan->argv, plan->envp);
  child_fails("execve");
}

// Waits until the child has executed kShell or ended (EOF on the exec pipe), until `deadline`.
bool await_exec(int exec_read, double deadline) {
  for (;;) {
    pollfd ready{exec_read, POLLIN, 0};
    const int wait_ms = static_cast<int>(std::max(0.0, deadline - now_seconds()) * 1e3);
    const int n = poll(&ready, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    char byte = 0;
    return read(exec_read, &byte, 1) == 0;
  }
}

// Whether `pid`, a child not yet waited for, has ended.
bool has_ended(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// argv[0] as execve needs it: a path, or the first executable of that name on kbench's PATH.
std::string executable_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

// What every tool may read of the system (tool_confinement), besides kShell.
constexpr const char* kSystemEntries[] = {"/usr",
                                          "/lib",
                                          "/lib64",
                                          "/lib32",
                                          "/libx32",
                                          "/opt",
                                          "/etc/ld.so.cache",
                                          "/etc/ld.so.conf",
                                          "/etc/ld.so.conf.d",
                                          "/etc/locale.alias",
                                          "/dev/null",
                                          "/dev/urandom"};

bool in_system_tree(const std::string& path) {
  if (path == kShell) return true;
  for (const std::string_view entry : kSystemEntries)
    if (path == entry ||
        (path.starts_with(entry) && path.size() > entry.size() && path[entry.size()] == '/'))
      return true;
  return false;
}

// The first path in `readable` that a user of no account cannot read: the system's trees checked at
// their top, the others (kbench's headers, oneMKL's directory, a tool's installation) whole. Known
// once per process: they are kbench's own installation.
std::string first_closed_tree(const std::vector<std::string>& readable) {
  static std::mutex mutex;
  static std::map<std::string, std::string> closed_by_tree;
  const std::lock_guard lock(mutex);
  for (const std::string& tree : readable) {
    const auto [known, fresh] = closed_by_tree.try_emplace(tree);
    if (fresh) known->second = first_path_closed_to_others(tree, !in_system_tree(tree));
    if (!known->second.empty()) return known->second;
  }
  return "";
}

// Makes `uid` and `gid` the owners of `dir` and of everything in it (links, not what they name);
// false when `dir` itself could not be given.
bool give_tree(const std::string& dir, uid_t uid, gid_t gid) {
  std::error_code ec;
  const bool given = lchown(dir.c_str(), uid, gid) == 0;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    (void)!lchown(it->path().c_str(), uid, gid);
  return given;
}

// Where kbench is root, the user the tool runs as: one of its own (sandbox::next_sandbox_id), who
// owns `work_dir` and what kbench wrote there (whatever kbench's umask) for the run, when every
// tree it reads is open to such a user; else 0, with why in `refused`.
uid_t tool_user(const std::vector<std::string>& readable, const std::string& work_dir,
                std::string& refused) {
  if (geteuid() != 0 || !sandbox::sandbox_ids_mapped()) {
    refused = sandbox::why_no_user_of_its_own() + ", so the build keeps kbench's user";
    return 0;
  }
  if (const std::string closed = first_closed_tree(readable); !closed.empty()) {
    refused = closed + " is closed to other users, so the build keeps root";
    return 0;
  }
  const uid_t user = sandbox::next_sandbox_id();
  if (!give_tree(work_dir, user, user)) {
    refused = std::string("its directory could not be handed over: ") + std::strerror(errno);
    return 0;
  }
  return user;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

Confinement tool_confinement(const std::string& tool, const std::string& work_dir,
                             std::vector<std::string> readable) {
  readable.insert(readable.end(), std::begin(kSystemEntries), std::end(kSystemEntries));
  // A tool outside those trees ($KBENCH_CXX, $KBENCH_LLVM_MCA): its installation, two levels up
  // from bin/ (/home/me/llvm for /home/me/llvm/bin/clang++; never / itself, for a tool in /bin).
  const std::filesystem::path path(tool), installation = path.parent_path().parent_path();
  if (path.is_absolute() && std::distance(installation.begin(), installation.end()) > 2)
    readable.push_back(installation.string());
  // TMPDIR relative, as the files the tool is given in its directory are: it starts there, and a
  // build dropped to a user of its own may not search the directories above it.
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "TMPDIR=."};
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LANG=") || entry.starts_with("LC_")) env.emplace_back(entry);
  }
  // A candidate needs a few hundred MiB to compile (the largest expert, 360 MiB) and writes a
  // shared object of a few MiB; a source made to exhaust memory or fill the disk ends at these.
  constexpr long long kAddressSpaceMb = 4096, kFileSizeMb = 256;
  return {std::move(readable), work_dir, std::move(env), kAddressSpaceMb, kFileSizeMb};
}

ConfinedResult run_confined(const std::vector<std::string>& argv, const Confinement& confinement,
                            double timeout_s, std::size_t max_output) {
  ConfinedResult result;
  const std::string exe = executable_path(argv.at(0));
  if (exe.find('/') == std::string::npos) {  // the shell would look for it on a PATH of its own
    result.error = "cannot run " + exe + ": not found on PATH";
    return result;
  }
  std::vector<std::string> args = {kShell, "-c", kTrampoline, "kbench-confined", exe};
  args.insert(args.end(), argv.begin() + 1, argv.end());
  std::vector<std::string> env = confinement.environment;
  std::vector<char*> c_argv = c_strings(args), c_env = c_strings(env);

  std::vector<std::string> readable = confinement.readable;
  readable.emplace_back(kShell);
  std::string why_not;
  const int ruleset = sandbox::build_ruleset(readable, confinement.work_dir, why_not);
  if (ruleset >= 0)
    result.layers.push_back("build_landlock_files");
  else
    result.missing.push_back("build_landlock_files: " + why_not);
  result.layers.insert(result.layers.end(),
                       {"build_environment_allowlist", "build_resource_limits"});
  std::string user_refused;
  const uid_t user = tool_user(readable, confinement.work_dir, user_refused);
  if (user != 0)
    result.layers.push_back("build_unprivileged_user");
  else
    result.missing.push_back("build_unprivileged_user: " + user_refused);

  const int output_fd = memfd_create("kbench-build-output", MFD_CLOEXEC);
  const int stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int go[2] = {-1, -1};
  const bool piped = pipe2(go, O_CLOEXEC) == 0;
  const auto release = [&] {
    for (int fd : {ruleset, stdin_fd, output_fd, go[0], go[1]})
      if (fd >= 0) close(fd);
    // What the tool made must not stay writable by a user id that a later worker may be given
    // (an object moves into the compile cache).
    if (user != 0) give_tree(confinement.work_dir, geteuid(), getegid());
  };
  if (output_fd < 0 || stdin_fd < 0 || !piped) {
    result.error = std::string("cannot prepare the build: ") + std::strerror(errno);
    release();
    return result;
  }
  const auto mebibytes = [](long long mb) { return static_cast<rlim_t>(mb) << 20; };
  ChildPlan plan{c_argv.data(),
                 c_env.data(),
                 confinement.work_dir.c_str(),
                 stdin_fd,
                 output_fd,
                 go[0],
                 go[1],
                 -1,
                 -1,
                 ruleset,
                 mebibytes(confinement.address_space_mb),
                 mebibytes(confinement.file_size_mb),
                 static_cast<rlim_t>(timeout_s) + 10,
                 user};
  const double deadline = now_seconds() + timeout_s;
  // A PID namespace ends everything the build started when the compiler's driver ends; a network
  // namespace leaves it no network. Without root, kbench's user is mapped into them, since the
  // build creates files; where that fails, the build starts again without them.
  std::string refused;
  pid_t pid = -1;
  for (const bool namespaces : {true, false}) {
    int exec_pipe[2] = {-1, -1};
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) break;
    plan.exec_read = exec_pipe[0];
    plan.exec_write = exec_pipe[1];
    pid = clone_namespaced(child_main, &plan, refused, namespaces);
    const int clone_errno = errno;
    close(exec_pipe[1]);
    const bool executed = pid >= 0 && await_exec(exec_pipe[0], deadline);
    close(exec_pipe[0]);
    errno = clone_errno;
    if (pid < 0 || !namespaces || !refused.empty() || geteuid() == 0) break;
    if (executed && has_ended(pid)) break;  // it failed before the tool; its output says why
    if (executed && map_own_ids(pid)) break;
    refused = "kbench's user could not be mapped into it";
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  if (refused.empty())
    result.layers.push_back("build_namespaces");
  else
    result.missing.push_back("build_namespaces: " + refused);
  if (pid < 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(errno);
    release();
    return result;
  }
  if (write(go[1], "g\n", 2) != 2) kill(pid, SIGKILL);  // it must not run unprepared

  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (now_seconds() > deadline) {
      kill(pid, SIGKILL);  // in a PID namespace, its end takes all the build started along
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    usleep(2000);
  }
  kill(-pid, SIGKILL);  // anything left in its group
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.output = kept_output(output_fd, max_output);
  release();
  return result;
}

}  // namespace kbench
