// Worker lifecycle: posix_spawn with fixed descriptors, deadline-bounded calls, SIGSTOP between
// calls.
#include "harness/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/timer.h"
#include "harness/worker_protocol.h"

extern char** environ;

namespace kbench {
namespace {

// How often a wait re-checks whether the worker died: a forked grandchild may keep the socket open,
// so end-of-file alone does not prove the worker is alive or dead.
constexpr int kPollSliceMs = 20;

std::string join_cpus(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) {
    if (!s.empty()) s += ',';
    s += std::to_string(c);
  }
  return s;
}

std::vector<std::string> worker_environment(int threads) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("OMP_NUM_THREADS=") || entry.starts_with("OPENBLAS_NUM_THREADS="))
      continue;
    env.emplace_back(entry);
  }
  env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  env.push_back("OPENBLAS_NUM_THREADS=" + std::to_string(threads));
  return env;
}

// Duplicates `fd` above the protocol's fixed numbers, close-on-exec, so the dup2 calls of the spawn
// cannot clobber one source with another.
int lift_fd(int fd) {
  return fcntl(fd, F_DUPFD_CLOEXEC, 100);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WEXITSTATUS(status) == worker::kExitKernelThrew) return "ended: kb_run threw a C++ exception";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

std::unique_ptr<WorkerProcess> WorkerProcess::start(const WorkerSpec& spec, CallOutcome& failure) {
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    failure = {CallStatus::kProtocolError, 0, 0,
               std::string("socketpair: ") + std::strerror(errno)};
    return nullptr;
  }
  w->control_fd_ = sockets[0];
  int shared_object = -1;
  if (!spec.so_path.empty()) {
    // Opened here, as kbench's user, and handed over: the worker drops privileges before loading it
    // and could not reach the cache directory by path.
    const int opened = open(spec.so_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (opened < 0) {
      failure = {CallStatus::kProtocolError, 0, 0,
                 "load: cannot open " + spec.so_path + ": " + std::strerror(errno)};
      close(sockets[1]);
      return nullptr;
    }
    shared_object = lift_fd(opened);
    close(opened);
  }
  w->log_fd_ = memfd_create("kbench-worker-log", MFD_CLOEXEC);
  const int inputs = lift_fd(spec.inputs_fd), outputs = lift_fd(spec.outputs_fd),
            control = lift_fd(sockets[1]), log = lift_fd(w->log_fd_);
  close(sockets[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log, 1);
  posix_spawn_file_actions_adddup2(&actions, log, 2);
  posix_spawn_file_actions_adddup2(&actions, inputs, worker::kInputsFd);
  posix_spawn_file_actions_adddup2(&actions, outputs, worker::kOutputsFd);
  posix_spawn_file_actions_adddup2(&actions, control, worker::kControlFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigfillset(&defaults);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);  // kbench ignores SIGPIPE; the worker must not
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, so one signal reaches all it forks
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> args = {
      spec.worker_exe,      "--workload",     std::string(spec.workload->id),   "--size",
      size_name(spec.size), "--threads",      std::to_string(spec.threads),     "--cpus",
      join_cpus(spec.cpus), "--mem-limit-mb", std::to_string(spec.mem_limit_mb)};
  if (shared_object >= 0) {
    posix_spawn_file_actions_adddup2(&actions, shared_object, worker::kSharedObjectFd);
    args.push_back("--candidate");
    args.push_back("1");
  } else if (!spec.gemm_plan.empty()) {
    args.push_back("--gemm-plan");
    args.push_back(spec.gemm_plan);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = worker_environment(spec.threads);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  const int rc =
      posix_spawn(&w->pid_, spec.worker_exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int fd : {inputs, outputs, control, log, shared_object})
    if (fd >= 0) close(fd);
  if (rc != 0) {
    failure = {CallStatus::kProtocolError, 0, 0,
               "cannot start " + spec.worker_exe + ": " + std::strerror(rc)};
    return nullptr;
  }
  w->alive_ = true;

  const double deadline = now_seconds() + spec.startup_timeout_s;
  if (!w->wait_readable(deadline, failure)) {
    if (failure.status == CallStatus::kTimeout)
      failure.message = "worker did not start within " + std::to_string(spec.startup_timeout_s) +
                        " s (a static constructor that never returns?)";
    return nullptr;
  }
  worker::Hello hello{};
  if (recv(w->control_fd_, &hello, sizeof hello, MSG_WAITALL) != sizeof hello ||
      hello.magic != worker::kHelloMagic) {
    failure = {CallStatus::kCrashed, 0, 0,
               "worker " + w->death_message() + " while loading the kernel"};
    return nullptr;
  }
  const auto code = static_cast<worker::HelloCode>(hello.code);
  if (code != worker::HelloCode::kReady) {
    std::string log_text = w->log_tail(1024);
    while (!log_text.empty() && log_text.back() == '\n') log_text.pop_back();
    const std::string last_line = log_text.substr(log_text.rfind('\n') + 1);
    failure = {CallStatus::kProtocolError, 0, 0,
               (code == worker::HelloCode::kLoadFailed     ? "load: "
                : code == worker::HelloCode::kNoEntryPoint ? "entry: "
                                                           : "setup: ") +
                   last_line};
    w->kill_all();
    return nullptr;
  }
  w->freeze();
  return w;
}

WorkerProcess::~WorkerProcess() {
  kill_all();
  if (control_fd_ >= 0) close(control_fd_);
  if (log_fd_ >= 0) close(log_fd_);
}

bool WorkerProcess::wait_readable(double deadline_s, CallOutcome& outcome) {
  for (;;) {
    pollfd pfd{control_fd_, POLLIN, 0};
    const double left = deadline_s - now_seconds();
    const int slice = std::clamp(static_cast<int>(left * 1000) + 1, 0, kPollSliceMs);
    const int ready = poll(&pfd, 1, slice);
    if (ready > 0 && (pfd.revents & POLLIN)) return true;
    int status = 0;
    const bool died =
        waitpid(pid_, &status, WNOHANG) == pid_ && (WIFEXITED(status) || WIFSIGNALED(status));
    if (died || (ready > 0 && (pfd.revents & (POLLHUP | POLLERR)))) {
      if (died) {
        alive_ = false;
        exit_description_ = describe_exit(status);
      }
      const std::string why = died ? exit_description_ : death_message();
      kill_all();
      outcome = {CallStatus::kCrashed, 0, 0, "worker " + why};
      return false;
    }
    if (now_seconds() >= deadline_s) {
      kill_all();
      outcome = {CallStatus::kTimeout, 0, 0, ""};
      return false;
    }
  }
}

CallOutcome WorkerProcess::call(double timeout_s) {
  CallOutcome outcome;
  if (!alive_) return {CallStatus::kCrashed, 0, 0, "worker is not running"};
  // Read while the worker is frozen, so the counters bracket exactly this call.
  const std::vector<TaskSchedstat> before = read_task_schedstats(pid_);
  thaw();
  const worker::Request request{static_cast<std::uint32_t>(worker::Op::kRun), ++sequence_};
  const double start = now_seconds();
  if (send(control_fd_, &request, sizeof request, MSG_NOSIGNAL) != sizeof request) {
    return {CallStatus::kCrashed, 0, 0, "worker " + death_message()};
  }
  worker::Reply reply{};
  std::size_t received = 0;
  const double deadline = start + timeout_s;
  while (received < sizeof reply) {
    if (!wait_readable(deadline, outcome)) {
      if (outcome.status == CallStatus::kTimeout) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "kb_run did not return within %.3g s", timeout_s);
        outcome.message = buf;
      }
      return outcome;
    }
    const ssize_t got = recv(control_fd_, reinterpret_cast<char*>(&reply) + received,
                             sizeof reply - received, MSG_DONTWAIT);
    if (got > 0) {
      received += static_cast<std::size_t>(got);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      // End of file: the worker died or closed its end mid-call.
      return {CallStatus::kCrashed, now_seconds() - start, 0,
              "worker " + death_message() + " during kb_run"};
    }
  }
  outcome.seconds = now_seconds() - start;
  char extra;
  const bool wrote_ahead = recv(control_fd_, &extra, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
  if ((reply.magic_xor_sequence ^ sequence_) != worker::kReplyMagic || wrote_ahead) {
    kill_all();
    return {CallStatus::kProtocolError, outcome.seconds, 0,
            "the worker's control socket carried a message kbench did not expect (forged reply?)"};
  }
  freeze();
  if (!alive_) return {CallStatus::kCrashed, outcome.seconds, 0, "worker " + death_message()};
  outcome.sched = sched_delta(before, read_task_schedstats(pid_));
  outcome.kernel_return = reply.kernel_return;
  if (reply.kernel_return != 0) {
    kill_all();
    outcome.status = CallStatus::kKernelError;
    outcome.message = "kb_run returned " + std::to_string(reply.kernel_return);
    return outcome;
  }
  outcome.status = CallStatus::kOk;
  return outcome;
}

void WorkerProcess::freeze() {
  if (!alive_) return;
  kill(-pid_, SIGSTOP);
  kill(pid_, SIGSTOP);  // in case the candidate moved the worker out of its process group
  int status = 0;
  // Returns once the worker has stopped (or died), so nothing of it runs while kbench reads
  // outputs.
  if (waitpid(pid_, &status, WUNTRACED) == pid_ && !WIFSTOPPED(status)) {
    alive_ = false;
    exit_description_ = describe_exit(status);
  }
}

void WorkerProcess::thaw() {
  if (!alive_) return;
  kill(-pid_, SIGCONT);
  kill(pid_, SIGCONT);
}

void WorkerProcess::kill_all() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  if (alive_) {
    int status;
    waitpid(pid_, &status, 0);
  }
  alive_ = false;
}

std::string WorkerProcess::death_message() {
  if (!alive_) return exit_description_.empty() ? "ended" : exit_description_;
  // A worker that closed its socket may still be running (hostile or wedged): give it a moment to
  // finish dying on its own, then end it, so this never blocks.
  int status = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      alive_ = false;
      exit_description_ = describe_exit(status);
      return exit_description_;
    }
    usleep(10000);
  }
  kill_all();
  return "closed its control socket and was killed";
}

double WorkerProcess::cpu_seconds() const {
  std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
  for (int index = 3; fields >> field && index <= 15; ++index)
    if (index == 14 || index == 15) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string WorkerProcess::log_tail(std::size_t max_bytes) const {
  struct stat st {};
  if (log_fd_ < 0 || fstat(log_fd_, &st) != 0 || st.st_size == 0) return "";
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t n = std::min(size, max_bytes);
  std::string tail(n, '\0');
  const ssize_t got = pread(log_fd_, tail.data(), n, static_cast<off_t>(size - n));
  tail.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return tail;
}

}  // namespace kbench
