// Worker lifecycle: posix_spawn with fixed descriptors, deadline-bounded calls, SIGSTOP between
// calls.
#include "harness/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/timer.h"
#include "harness/namespaced_child.h"
#include "harness/sandbox.h"
#include "harness/worker_protocol.h"

extern char** environ;

namespace kbench {
namespace {

// How often a wait re-checks whether the worker died: a forked grandchild may keep the socket open,
// so end-of-file alone does not prove the worker is alive or dead.
constexpr int kPollSliceMs = 20;

// The largest CPU-time limit a worker is given (about 30 years): any larger deadline is this one.
constexpr double kLongestCpuLimitS = 1e9;

std::string join_cpus(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) {
    if (!s.empty()) s += ',';
    s += std::to_string(c);
  }
  return s;
}

// What a kernel's libraries read from the environment; everything else (API keys, tokens, paths
// to kbench's files) stays with kbench. The same list for candidate and baseline workers, so both
// sides run under the same conditions.
bool allowed_in_worker(std::string_view entry) {
  static constexpr std::array<std::string_view, 12> kPrefixes = {
      "OMP_", "GOMP_", "KMP_",   "OPENBLAS_", "ONEDNN_", "DNNL_",
      "MKL_", "ASAN_", "UBSAN_", "LSAN_",     "LC_",     "KBENCH_MKL="};
  for (std::string_view prefix : kPrefixes)
    if (entry.starts_with(prefix)) return true;
  return entry.starts_with("LANG=") || entry.starts_with("TZ=");
}

std::vector<std::string> worker_environment(int threads) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("OMP_NUM_THREADS=") || entry.starts_with("OPENBLAS_NUM_THREADS="))
      continue;
    if (allowed_in_worker(entry)) env.emplace_back(entry);
  }
  env.push_back("PATH=/usr/bin:/bin");
  env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  env.push_back("OPENBLAS_NUM_THREADS=" + std::to_string(threads));
  return env;
}

// CPU time of every thread of process `pid`, live and exited, in nanoseconds of the scheduler's own
// accounting (the process CPU-time clock), not the 10 ms ticks of /proc/<pid>/stat. 0 when the
// process is gone.
double process_cpu_seconds(pid_t pid) {
  clockid_t clock;
  timespec ts{};
  if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The value of `key` in a "Key:\tvalue" file such as /proc/<pid>/status; empty when absent.
std::string status_field(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ':') {
      const std::size_t value = line.find_first_not_of(" \t", key.size() + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  }
  return "";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The NUL-separated strings of a /proc file such as cmdline or environ.
std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Whether process `pid` lives in another namespace of `kind` ("pid", "net") than this process.
bool own_namespace(pid_t pid, const char* kind) {
  struct stat mine {
  }, theirs{};
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  if (stat(("/proc/self/ns/" + std::string(kind)).c_str(), &mine) != 0 ||
      stat(path.c_str(), &theirs) != 0)
    return false;
  return mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev;
}

// Duplicates `fd` above the protocol's fixed numbers, close-on-exec, so the dup2 calls of the spawn
// cannot clobber one source with another.
int lift_fd(int fd) {
  return fcntl(fd, F_DUPFD_CLOEXEC, 100);
}

}  // namespace

namespace {

// What the cloned child does before it becomes the worker. It runs in a copy of a possibly
// multithreaded kbench, so it only makes async-signal-safe calls on data prepared beforehand.
struct ChildPlan {
  const char* exe;
  char** argv;
  char** envp;
  int work_dir_fd;         // the (already removed) directory to enter
  std::array<int, 7> fds;  // source of descriptor i (0..6), -1: none
};

int child_main(void* arg) {
  const auto* plan = static_cast<const ChildPlan*>(arg);
  reset_signals_and_group();
  // Before the dup2 calls, which may reuse the directory's descriptor number.
  if (fchdir(plan->work_dir_fd) != 0) _exit(127);
  for (int target = 0; target < static_cast<int>(plan->fds.size()); ++target)
    if (plan->fds[target] >= 0 && dup2(plan->fds[target], target) < 0) _exit(127);
  execve(plan->exe, plan->argv, plan->envp);
  _exit(127);
}

// Starts the child in new PID and network namespaces (falling back, with the reasons in `missing`,
// where the kernel or kbench's privileges refuse them). Without root, its user namespace stays
// unmapped: the worker keeps kbench's user outside it, and creates no file.
pid_t clone_child(ChildPlan& plan, std::vector<std::string>& missing) {
  std::string refused;
  const pid_t pid = clone_namespaced(child_main, &plan, refused);
  if (!refused.empty()) {
    missing.push_back("pid_namespace: " + refused);
    missing.push_back("net_namespace: " + refused);
  }
  return pid;
}

}  // namespace

std::unique_ptr<WorkerProcess> WorkerProcess::start(const WorkerSpec& spec, CallOutcome& failure) {
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  const SeatConditions& seat = spec.seat;
  const bool candidate = !spec.so_path.empty();
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    failure = {CallStatus::kProtocolError, 0, 0,
               std::string("socketpair: ") + std::strerror(errno)};
    return nullptr;
  }
  w->control_fd_ = sockets[0];
  int shared_object = -1;
  if (candidate) {
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
  // A private, empty working directory, removed before the worker even starts: the worker enters
  // it through a descriptor, so it stays empty for good (nothing can be created in a removed
  // directory), and only a kill of kbench in the instant between mkdtemp and rmdir can leave it
  // (empty) behind.
  char work_dir[] = "/tmp/kbench-worker-XXXXXX";
  const int work_dir_fd =
      mkdtemp(work_dir) ? open(work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (work_dir_fd < 0) {
    failure = {CallStatus::kProtocolError, 0, 0,
               std::string("cannot create the worker's directory: ") + std::strerror(errno)};
    rmdir(work_dir);
    close(sockets[1]);
    if (shared_object >= 0) close(shared_object);
    return nullptr;
  }
  chmod(work_dir, 0755);
  rmdir(work_dir);
  w->log_fd_ = memfd_create("kbench-worker-log", MFD_CLOEXEC);
  const int inputs = lift_fd(seat.inputs_fd), outputs = lift_fd(spec.outputs_fd),
            control = lift_fd(sockets[1]), log = lift_fd(w->log_fd_);
  const int dev_null = lift_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  close(sockets[1]);

  std::vector<std::string> args = {
      seat.worker_exe, "--workload", std::string(seat.workload->id()), "--size",
      size_name(seat.size), "--threads", std::to_string(seat.threads), "--cpus",
      join_cpus(seat.cpus), "--mem-limit-mb", std::to_string(seat.mem_limit_mb), "--cpu-limit-s",
      // Saturated: a deadline too far (or not a number) must not convert to 0, which means none.
      std::to_string(static_cast<long long>(
          std::ceil(seat.cpu_limit_s < kLongestCpuLimitS ? seat.cpu_limit_s : kLongestCpuLimitS))),
      // 0: none, where kbench's user namespace maps no id of the range (worker_main.cc).
      "--sandbox-id",
      std::to_string(sandbox::sandbox_ids_mapped() ? sandbox::next_sandbox_id() : 0)};
  if (candidate) args.insert(args.end(), {"--candidate", "1"});
  if (!seat.library_plan.empty()) args.insert(args.end(), {"--library-plan", seat.library_plan});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = worker_environment(seat.threads);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  ChildPlan plan{seat.worker_exe.c_str(),
                 argv.data(),
                 envp.data(),
                 work_dir_fd,
                 {dev_null, log, log, inputs, outputs, control, shared_object}};
  std::vector<std::string> missing;
  w->pid_ = clone_child(plan, missing);
  const int clone_errno = errno;
  for (int fd : {inputs, outputs, control, log, shared_object, dev_null, work_dir_fd})
    if (fd >= 0) close(fd);
  if (w->pid_ < 0) {
    failure = {CallStatus::kProtocolError, 0, 0,
               "cannot start " + seat.worker_exe + ": " + std::strerror(clone_errno)};
    return nullptr;
  }
  w->alive_ = true;
  if (missing.empty()) w->sandbox_.layers = {"pid_namespace", "net_namespace"};
  w->sandbox_.layers.insert(w->sandbox_.layers.end(),
                            {"environment_allowlist", "private_directory", "own_output_arena"});
  w->sandbox_.missing = std::move(missing);

  const double deadline = now_seconds() + seat.startup_timeout_s;
  if (!w->receive_report(deadline, failure)) return nullptr;
  if (!w->wait_readable(deadline, failure)) {
    if (failure.status == CallStatus::kTimeout)
      failure.message = "worker did not start within " + std::to_string(seat.startup_timeout_s) +
                        " s (a static constructor that never returns?)";
    return nullptr;
  }
  worker::Hello hello{};
  if (recv(w->control_fd_, &hello, sizeof hello, MSG_WAITALL) != sizeof hello ||
      hello.magic != worker::kHelloMagic) {
    const std::string why = w->death_message();
    failure = {w->violation_ ? CallStatus::kViolation : CallStatus::kCrashed, 0, 0,
               w->violation_ ? why : "worker " + why + " while loading the kernel"};
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

// The report comes before any candidate code runs, so what it says was installed is true.
bool WorkerProcess::receive_report(double deadline_s, CallOutcome& failure) {
  if (!wait_readable(deadline_s, failure)) {
    if (failure.status == CallStatus::kTimeout)
      failure.message = "worker did not confine itself within the startup time";
    return false;
  }
  worker::SandboxReport report{};
  if (recv(control_fd_, &report, sizeof report, MSG_WAITALL) != sizeof report ||
      report.magic != worker::kReportMagic) {
    failure = {CallStatus::kCrashed, 0, 0, "worker " + death_message() + " while confining itself"};
    return false;
  }
  if (report.layers == 0 && report.missing == 0) return true;  // a setup failure before confining
  const sandbox::Applied applied{report.layers, report.missing, report.landlock_abi};
  for (std::string& name : sandbox::layer_names(applied.layers))
    sandbox_.layers.push_back(std::move(name));
  for (std::string& reason : sandbox::missing_reasons(applied))
    sandbox_.missing.push_back(std::move(reason));
  return true;
}

WorkerProcess::~WorkerProcess() {
  kill_all();
  if (control_fd_ >= 0) close(control_fd_);
  if (log_fd_ >= 0) close(log_fd_);
}

void WorkerProcess::note_exit(int status) {
  alive_ = false;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
    violation_ = true;
    exit_description_ = "sandbox: killed by SIGSYS (a forbidden system call)";
  } else if (WIFSIGNALED(status)) {
    exit_description_ = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                        strsignal(WTERMSIG(status)) + ")";
  } else if (WEXITSTATUS(status) == worker::kExitKernelThrew) {
    exit_description_ = "ended: kb_run threw a C++ exception";
  } else if (WEXITSTATUS(status) == worker::kExitAborted) {
    exit_description_ =
        "aborted (SIGABRT: abort(), a failed assert, std::terminate or a C library check)";
  } else if (WEXITSTATUS(status) == sandbox::kExitForbiddenSyscall) {
    violation_ = true;
    exit_description_ = "sandbox: forbidden system call " + forbidden_syscall_in_log();
  } else {
    exit_description_ = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
}

// The worker's SIGSYS handler names the call in the log; a candidate that muted its stderr leaves
// only the exit status.
std::string WorkerProcess::forbidden_syscall_in_log() const {
  const std::string log = log_tail(4096);
  const std::size_t at = log.rfind(sandbox::kViolationPrefix);
  if (at == std::string::npos) return "(unnamed: the log was muted)";
  const std::size_t digits = at + std::strlen(sandbox::kViolationPrefix);
  const int number = std::atoi(log.c_str() + digits);
  return sandbox::syscall_name(number);
}

// A thread that completed the group stop may still be on its CPU for a moment, in the kernel on its
// way out, and the run time it accrued since the last scheduler tick is booked only when it leaves:
// read until two snapshots agree, so that time counts for the call it belongs to.
std::vector<TaskSchedstat> WorkerProcess::settled_schedstats() const {
  constexpr int kAttempts = 20;
  constexpr useconds_t kPauseUs = 50;
  std::vector<TaskSchedstat> last = read_task_schedstats(pid_);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    usleep(kPauseUs);
    std::vector<TaskSchedstat> now = read_task_schedstats(pid_);
    const bool same = std::equal(now.begin(), now.end(), last.begin(), last.end(),
                                 [](const TaskSchedstat& a, const TaskSchedstat& b) {
                                   return a.tid == b.tid && a.run_ns == b.run_ns;
                                 });
    if (same) return now;
    last = std::move(now);
  }
  return last;
}

// Between calls every thread is stopped: the group stop that freeze() waits for completes only when
// each thread has taken it, and nothing the candidate can reach may send SIGCONT. A thread found
// in any other state escaped the freeze and could run beside the other side's timed calls. The
// state is what counts, not CPU time booked while frozen: a stopping thread's last slice is booked
// whenever it leaves the CPU, which on a VM whose virtual CPU the host preempted came milliseconds
// late (seen at 2.9 ms on a CI host).
std::string WorkerProcess::escaped_the_freeze() const {
  const std::optional<ThreadState> running = first_unstopped_thread(pid_);
  if (!running) return "";
  return "sandbox: thread " + std::to_string(running->tid) +
         " of the worker was not stopped while the worker was frozen (state " +
         std::string(1, running->state) + ")";
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
      if (died) note_exit(status);
      const std::string why = died ? exit_description_ : death_message();
      kill_all();
      outcome = violation_ ? CallOutcome{CallStatus::kViolation, 0, 0, why}
                           : CallOutcome{CallStatus::kCrashed, 0, 0, "worker " + why};
      return false;
    }
    if (now_seconds() >= deadline_s) {
      kill_all();
      outcome = {CallStatus::kTimeout, 0, 0, ""};
      return false;
    }
  }
}

bool WorkerProcess::exchange(worker::Op op, double timeout_s, worker::Reply& reply,
                             CallOutcome& outcome) {
  if (!alive_) {
    outcome = {CallStatus::kCrashed, 0, 0, "worker is not running"};
    return false;
  }
  // Read while the worker is frozen, so the counters bracket exactly this exchange.
  const std::vector<TaskSchedstat> before = read_task_schedstats(pid_);
  if (const std::string escaped = escaped_the_freeze(); !escaped.empty()) {
    kill_all();
    outcome = {CallStatus::kViolation, 0, 0, escaped};
    return false;
  }
  // The awake window opens before the worker can run: CPU it burns while kbench waits for its own
  // turn on a loaded machine still falls inside it.
  const double cpu_before = process_cpu_seconds(pid_);
  const double woken_at = now_seconds();
  thaw();
  const worker::Request request{static_cast<std::uint32_t>(op), ++sequence_};
  const double start = now_seconds();
  if (send(control_fd_, &request, sizeof request, MSG_NOSIGNAL) != sizeof request) {
    outcome = {CallStatus::kCrashed, 0, 0, "worker " + death_message()};
    return false;
  }
  std::size_t received = 0;
  const double deadline = start + timeout_s;
  while (received < sizeof reply) {
    if (!wait_readable(deadline, outcome)) {
      if (outcome.status == CallStatus::kCrashed) outcome.message += " during kb_run";
      if (outcome.status == CallStatus::kTimeout) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "kb_run did not return within %.3g s", timeout_s);
        outcome.message = buf;
      }
      return false;
    }
    const ssize_t got = recv(control_fd_, reinterpret_cast<char*>(&reply) + received,
                             sizeof reply - received, MSG_DONTWAIT);
    if (got > 0) {
      received += static_cast<std::size_t>(got);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      // End of file: the worker died or closed its end mid-call.
      const std::string why = death_message();
      outcome = {violation_ ? CallStatus::kViolation : CallStatus::kCrashed, now_seconds() - start,
                 0, violation_ ? why : "worker " + why + " during kb_run"};
      return false;
    }
  }
  // The call ends once the worker is stopped, not when its reply arrives: a kernel that replies
  // early and finishes in the moment before the stop would otherwise do that work off the clock.
  freeze();
  const double stopped_at = now_seconds();
  outcome.seconds = stopped_at - start;
  if (!alive_) {
    outcome = {CallStatus::kCrashed, outcome.seconds, 0, "worker " + death_message()};
    return false;
  }
  char extra;
  const bool wrote_ahead = recv(control_fd_, &extra, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
  if ((reply.magic_xor_sequence ^ sequence_) != worker::kReplyMagic || wrote_ahead) {
    kill_all();
    outcome = {CallStatus::kViolation, outcome.seconds, 0,
               "sandbox: the worker's control socket carried a message kbench did not ask for "
               "(a reply forged before kb_run returned)"};
    return false;
  }
  outcome.sched = sched_delta(before, settled_schedstats());
  awake_.wall_s += stopped_at - woken_at;
  awake_.cpu_s += process_cpu_seconds(pid_) - cpu_before;
  return true;
}

CallOutcome WorkerProcess::verify_channel(double timeout_s) {
  worker::Reply reply{};
  CallOutcome outcome;
  if (exchange(worker::Op::kPing, timeout_s, reply, outcome)) outcome.status = CallStatus::kOk;
  return outcome;
}

CallOutcome WorkerProcess::call(double timeout_s) {
  worker::Reply reply{};
  CallOutcome outcome;
  if (!exchange(worker::Op::kRun, timeout_s, reply, outcome)) return outcome;
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
  if (waitpid(pid_, &status, WUNTRACED) == pid_ && !WIFSTOPPED(status)) note_exit(status);
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
      note_exit(status);
      return exit_description_;
    }
    usleep(10000);
  }
  kill_all();
  violation_ = true;
  return "sandbox: the worker closed its control socket while running, and was killed";
}

bool exceeds_thread_budget(const AwakeTime& awake, int threads) {
  return awake.cpu_s > kCpuBudgetFactor * threads * awake.wall_s + kCpuBudgetSlackS;
}

WorkerObservation WorkerProcess::observe() const {
  WorkerObservation o;
  const std::string proc = "/proc/" + std::to_string(pid_);
  const std::string status = read_text(proc + "/status");
  o.seccomp = status_field(status, "Seccomp");
  o.no_new_privs = status_field(status, "NoNewPrivs");
  o.cpus_allowed = status_field(status, "Cpus_allowed_list");
  o.capabilities = status_field(status, "CapEff");
  // "Uid:" lists real, effective, saved and file-system ids; a worker of its own user has no 0.
  std::istringstream uids(status_field(status, "Uid"));
  for (std::string id; uids >> id;) o.runs_as_root = o.runs_as_root || id == "0";
  o.own_pid_namespace = own_namespace(pid_, "pid");
  o.own_net_namespace = own_namespace(pid_, "net");
  o.limits = read_text(proc + "/limits");
  const std::vector<std::string> args = split_nul(read_text(proc + "/cmdline"));
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--sandbox-id" || args[i] == "--candidate") && i + 1 < args.size()) {
      ++i;
      continue;
    }
    o.arguments.push_back(args[i]);
  }
  o.environment = split_nul(read_text(proc + "/environ"));
  o.layers = sandbox_.layers;
  o.missing = sandbox_.missing;
  return o;
}

std::string observation_difference(const WorkerObservation& a, const WorkerObservation& b) {
  std::string fields;
  const auto note = [&](bool differs, const char* name) {
    if (!differs) return;
    if (!fields.empty()) fields += ", ";
    fields += name;
  };
  note(a.seccomp != b.seccomp, "seccomp");
  note(a.no_new_privs != b.no_new_privs, "no_new_privs");
  note(a.cpus_allowed != b.cpus_allowed, "cpus_allowed");
  note(a.capabilities != b.capabilities, "capabilities");
  note(a.runs_as_root != b.runs_as_root, "runs_as_root");
  note(a.own_pid_namespace != b.own_pid_namespace, "pid_namespace");
  note(a.own_net_namespace != b.own_net_namespace, "net_namespace");
  note(a.limits != b.limits, "limits");
  note(a.arguments != b.arguments, "arguments");
  note(a.environment != b.environment, "environment");
  note(a.layers != b.layers, "layers");
  note(a.missing != b.missing, "missing");
  return fields;
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
