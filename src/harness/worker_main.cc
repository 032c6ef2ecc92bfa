// kbench-worker: runs one kernel (a candidate's shared object or a built-in baseline) for kbench,
// in a process of its own, confined by the sandbox whichever kernel it runs (both seats of an
// evaluation run alike), answering one request at a time.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grp.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/amx.h"
#include "core/mkl_runtime.h"
#include "harness/sandbox.h"
#include "harness/shared_tensors.h"
#include "harness/worker_protocol.h"
#include "ops/gemm.h"
#include "ops/library_calls.h"
#include "ops/library_threads.h"
#include "workloads/registry.h"

namespace kbench::worker {
namespace {

struct Args {
  std::string workload, size, cpus;
  std::string library_plan;  // the baseline's library paths (ops::set_library_plan)
  bool candidate = false;    // load the shared object on kSharedObjectFd instead of the baseline
  int threads = 1;
  long long mem_limit_mb = 0;            // RLIMIT_AS; 0: no limit
  long long cpu_limit_s = 0;             // RLIMIT_CPU; 0: no limit
  unsigned sandbox_id = kSandboxIdBase;  // the user and group the worker drops to; 0: none
};

// The worker is PID 1 of its namespace, and the kernel drops a signal that PID 1 sends itself
// unless PID 1 handles it: unhandled, abort()'s SIGABRT was ignored, glibc's fallback instruction
// then faulted, and the verdict named a segmentation fault.
void on_abort(int) {
  [[maybe_unused]] const ssize_t ignored =
      write(STDERR_FILENO, kAbortLine, std::strlen(kAbortLine));
  _exit(kExitAborted);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--workload")
      a.workload = value;
    else if (key == "--size")
      a.size = value;
    else if (key == "--candidate")
      a.candidate = value == "1";
    else if (key == "--threads")
      a.threads = std::atoi(value.c_str());
    else if (key == "--cpus")
      a.cpus = value;
    else if (key == "--library-plan")
      a.library_plan = value;
    else if (key == "--mem-limit-mb")
      a.mem_limit_mb = std::atoll(value.c_str());
    else if (key == "--cpu-limit-s")
      a.cpu_limit_s = std::atoll(value.c_str());
    else if (key == "--sandbox-id")
      a.sandbox_id = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    else
      throw std::runtime_error("unknown worker argument " + key);
  }
  return a;
}

void send_all(const void* data, size_t n) {
  // A failed send means kbench is gone; nothing is left to do.
  if (send(kControlFd, data, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) _exit(3);
}

bool recv_all(void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = recv(kControlFd, p, n, 0);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool g_report_sent = false;

void send_report(const sandbox::Applied& applied) {
  const SandboxReport report{kReportMagic, applied.layers, applied.missing, applied.landlock_abi};
  send_all(&report, sizeof report);
  g_report_sent = true;
}

void say_hello(HelloCode code) {
  if (!g_report_sent) send_report({});  // a setup failure before confinement: nothing installed
  const Hello hello{kHelloMagic, static_cast<std::int32_t>(code)};
  send_all(&hello, sizeof hello);
}

void pin_to_cpus(const std::string& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  size_t start = 0;
  while (start < cpus.size()) {
    const size_t comma = cpus.find(',', start);
    CPU_SET(std::atoi(cpus.substr(start, comma - start).c_str()), &set);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("kbench-worker: sched_setaffinity");
}

// Gives up root before any candidate code runs. Failing to drop is fatal: running a candidate with
// root's reach is exactly what this prevents.
void drop_privileges(const Args& args, sandbox::Applied& applied) {
  if (geteuid() != 0 || args.sandbox_id == 0) {
    // Already unprivileged, or root of a user namespace that maps no id to drop to (a rootless
    // container): it shares kbench's user (docs/security.md), and Landlock is what keeps that
    // user's files out of reach.
    applied.missing |= sandbox::kUnprivilegedUser;
    return;
  }
  if (args.sandbox_id < kSandboxIdBase || args.sandbox_id >= kSandboxIdBase + kSandboxIdSpan)
    throw std::runtime_error("sandbox id outside kbench's range");
  if (setgroups(0, nullptr) != 0 || setgid(args.sandbox_id) != 0 || setuid(args.sandbox_id) != 0)
    throw std::runtime_error(std::string("cannot drop privileges: ") + std::strerror(errno));
  // Changing credentials marks the process non-dumpable, which makes /proc/self/fd unreadable to
  // it; the loader needs /proc/self/fd/N to open the shared object.
  prctl(PR_SET_DUMPABLE, 1);
  // It also clears the parent-death signal set in main(): without it again, a worker whose kbench
  // was killed ran on, a spinning candidate until its CPU-time limit, hours away. A kbench that
  // died in between sends no signal any more, but its end of the channel is closed by then.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  pollfd channel{kControlFd, POLLRDHUP, 0};
  if (poll(&channel, 1, 0) > 0 && (channel.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0)
    _exit(EXIT_FAILURE);  // nobody is left to read a status
  // Counted against this worker's own user: a thread bomb stops here and hurts no other worker.
  const auto max_processes = static_cast<rlim_t>(256 + 64 * args.threads);
  const rlimit processes{max_processes, max_processes};
  setrlimit(RLIMIT_NPROC, &processes);
  applied.layers |= sandbox::kUnprivilegedUser;
}

int serve(const Args& args) {
  const Workload* workload = find_workload(args.workload);
  const auto size = parse_size(args.size);
  if (!workload || !size) {
    std::fprintf(stderr, "kbench-worker: unknown workload or size\n");
    say_hello(HelloCode::kSetupFailed);
    return 2;
  }
  const Problem problem = workload->problem(*size);
  std::vector<TensorSpec> input_specs;
  for (const InputSpec& in : problem.inputs) input_specs.push_back(in.tensor);
  SharedTensors inputs = SharedTensors::attach(kInputsFd, input_specs, /*writable=*/false);
  SharedTensors outputs = SharedTensors::attach(kOutputsFd, problem.outputs, /*writable=*/true);
  const std::vector<kb_param> params = abi_params(problem);
  const kb_config config{args.threads, static_cast<int32_t>(params.size()), params.data()};

  pin_to_cpus(args.cpus);
  // libgomp sized its default team before the pinning above; oneDNN and OpenMP kernels use this.
  ops::set_library_threads(args.threads);

  KernelFn kernel = workload->baseline;
  ops::set_library_plan(args.library_plan);
  {
    // MKL's loader ends the process ("Cannot load libmkl_rt") when getcwd fails, which it does in
    // this worker's removed working directory: it loads from the root, and the worker returns.
    const int removed_dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (removed_dir < 0 || chdir("/") != 0) throw std::runtime_error("cannot leave the work dir");
    ops::load_gemm_libraries();
    const bool back = fchdir(removed_dir) == 0;
    close(removed_dir);
    if (!back) throw std::runtime_error("cannot return to the work dir");
  }
  // Every worker confines itself the same way, so the baseline is timed in the candidate's seat.
  // AMX tiles need a process-wide permission before their first use; granted here, candidates may
  // use them directly (or call arch_prctl themselves, which the filter allows).
  if (cpu_has_amx_bf16()) request_amx_permission();
  std::signal(SIGABRT, on_abort);  // the candidate may install its own handler over it
  sandbox::Applied applied;
  sandbox::limit_resources({args.mem_limit_mb, args.cpu_limit_s, args.threads}, applied);
  drop_privileges(args, applied);
  sandbox::restrict_filesystem(args.candidate ? kSharedObjectFd : -1, mkl::library_dir(), applied);
  sandbox::install_syscall_filter(kControlFd, applied);
  send_report(applied);
  if (args.candidate) {
    // Loading runs the candidate's static constructors: from here on this process is untrusted.
    const std::string so_path = "/proc/self/fd/" + std::to_string(kSharedObjectFd);
    void* handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      std::fprintf(stderr, "kbench-worker: %s\n", dlerror());
      say_hello(HelloCode::kLoadFailed);
      return 2;
    }
    kernel = reinterpret_cast<KernelFn>(dlsym(handle, "kb_run"));
    if (!kernel) {
      std::fprintf(stderr, "kbench-worker: the candidate defines no kb_run with C linkage\n");
      say_hello(HelloCode::kNoEntryPoint);
      return 2;
    }
  }
  say_hello(HelloCode::kReady);

  std::vector<kb_tensor> input_views(inputs.views().begin(), inputs.views().end());
  std::vector<kb_tensor> output_views(outputs.views().begin(), outputs.views().end());
  Request request{};
  while (recv_all(&request, sizeof request)) {
    if (request.op == static_cast<std::uint32_t>(Op::kPing)) {
      const Reply pong{kReplyMagic ^ request.sequence, 0};
      send_all(&pong, sizeof pong);
      continue;
    }
    if (request.op != static_cast<std::uint32_t>(Op::kRun)) break;
    // Fresh copies of the descriptors each call: a candidate that rewrites them cannot steer the
    // next.
    std::vector<kb_tensor> in = input_views, out = output_views;
    int rc = 0;
    try {
      rc = kernel(&config, in.data(), static_cast<int32_t>(in.size()), out.data(),
                  static_cast<int32_t>(out.size()));
    } catch (...) {
      std::fprintf(stderr, "kbench-worker: kb_run threw a C++ exception\n");
      std::fflush(stderr);
      _exit(kExitKernelThrew);
    }
    const Reply reply{kReplyMagic ^ request.sequence, rc};
    send_all(&reply, sizeof reply);
  }
  return 0;
}

}  // namespace
}  // namespace kbench::worker

int main(int argc, char** argv) {
  // Die with kbench: a worker must never outlive the evaluation that started it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Only the descriptors of the protocol reach the kernel under test (no database, no other
  // arenas).
  close_range(kbench::worker::kSharedObjectFd + 1, ~0u, 0);
  try {
    return kbench::worker::serve(kbench::worker::parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench-worker: %s\n", e.what());
    kbench::worker::say_hello(kbench::worker::HelloCode::kSetupFailed);
    return 2;
  }
}
