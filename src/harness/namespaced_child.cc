#include "harness/namespaced_child.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace kbench {

bool map_own_ids(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const auto put = [&](const std::string& file, const std::string& text) {
    std::ofstream out(proc + file);
    out << text;
    out.flush();
    return out.good();
  };
  const std::string uid = std::to_string(geteuid()), gid = std::to_string(getegid());
  return put("/setgroups", "deny") && put("/uid_map", uid + " " + uid + " 1\n") &&
         put("/gid_map", gid + " " + gid + " 1\n");
}

pid_t clone_namespaced(int (*child)(void*), void* arg, std::string& refused, bool namespaces) {
  constexpr std::size_t kStackBytes = 256 << 10;
  void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  char* top = static_cast<char*>(stack) + kStackBytes;
  pid_t pid = -1;
  if (namespaces) {
    const int user = geteuid() == 0 ? 0 : CLONE_NEWUSER;
    pid = clone(child, top, user | CLONE_NEWPID | CLONE_NEWNET | SIGCHLD, arg);
    refused = pid < 0 ? std::string("clone refused it (") + std::strerror(errno) + ")" : "";
  }
  if (pid < 0) pid = clone(child, top, SIGCHLD, arg);
  const int saved = errno;
  munmap(stack, kStackBytes);  // the child runs on its own copy (no CLONE_VM)
  errno = saved;
  return pid;
}

void reset_signals_and_group() {
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &defaults, nullptr);
  setpgid(0, 0);
}

}  // namespace kbench
