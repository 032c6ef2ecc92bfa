// kbench's side of a worker process: start it, call the kernel with a deadline, time the call from
// outside, freeze the worker between calls, and kill its whole process group when done.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/eval_result.h"
#include "harness/schedstat.h"
#include "harness/worker_protocol.h"
#include "workloads/workload.h"

namespace kbench {

// What a seat is: the conditions a worker starts and runs under. The candidate's seat and the
// baseline's get equal conditions (the evaluator builds both from one function, and compares what
// it observes of the two processes before timing), so a speedup compares kernels, not seats.
struct SeatConditions {
  std::string worker_exe;  // path of kbench-worker
  const Workload* workload = nullptr;
  Size size = Size::kSmoke;
  int threads = 1;
  std::vector<int> cpus;  // CPUs the worker is pinned to (threads of them)
  long long mem_limit_mb = 0;
  double cpu_limit_s = 0;  // RLIMIT_CPU over the worker's life (a backstop to deadlines)
  int inputs_fd = -1;      // memfd with the inputs (the worker maps it read-only)
  double startup_timeout_s = 10;
  std::string library_plan;  // ops::set_library_plan's encoding of the baseline's library paths

  bool operator==(const SeatConditions&) const = default;
};

// One worker: a seat, the code it loads and the arena it writes. Every worker confines itself
// before it loads any code (harness/sandbox.h): the baseline's seat is the candidate's.
struct WorkerSpec {
  SeatConditions seat;
  std::string so_path;  // candidate shared object; empty runs the built-in baseline
  int outputs_fd = -1;  // memfd with this worker's outputs
};

// What kbench reads of a running worker from /proc: the confinement it is really under, for
// comparing two seats. Equal for two workers started from equal SeatConditions.
struct WorkerObservation {
  std::string seccomp;             // /proc/<pid>/status "Seccomp" (2: filter)
  std::string no_new_privs;        // "NoNewPrivs"
  std::string cpus_allowed;        // "Cpus_allowed_list"
  std::string capabilities;        // "CapEff"
  bool runs_as_root = false;       // real or effective user 0
  bool own_pid_namespace = false;  // differs from kbench's
  bool own_net_namespace = false;  // differs from kbench's
  std::string limits;              // /proc/<pid>/limits, whole
  // The worker's command line without what names the worker itself (its user id) or its code
  // (--candidate), and its environment: the seat as the worker was told it.
  std::vector<std::string> arguments;
  std::vector<std::string> environment;
  std::vector<std::string> layers;  // what the worker reported installing (SandboxReport)
  std::vector<std::string> missing;

  bool operator==(const WorkerObservation&) const = default;
};

// The fields in which two observations differ, by name ("limits, cpus_allowed"); empty if none.
std::string observation_difference(const WorkerObservation& a, const WorkerObservation& b);

// How a call ended. Only kOk says the kernel returned 0; whether its outputs are right is the
// checker's business.
// kViolation: the worker broke the sandbox's rules (forbidden system call, forged reply, closed its
// control socket, not stopped while frozen); the message starts with "sandbox:".
enum class CallStatus { kOk, kKernelError, kCrashed, kTimeout, kProtocolError, kViolation };

struct CallOutcome {
  CallStatus status = CallStatus::kCrashed;
  double seconds = 0;  // wall time from sending the request until the worker is stopped again
  int kernel_return = 0;
  std::string message;  // one line for anything but kOk
  // The worker's threads between just before the request and just after the worker froze again,
  // read by kbench from /proc (the worker cannot forge it); invalid when /proc has no schedstat.
  SchedDelta sched;
};

// The worker's awake windows, each from just before it was resumed until it had stopped again, and
// the CPU time (all threads, live and exited) it used in them, read while it was stopped and
// settled: both over the same windows.
struct AwakeTime {
  double wall_s = 0;
  double cpu_s = 0;
};

// Whether `awake` holds more CPU time than `threads` threads can use in its wall time. An honest
// worker pinned to `threads` CPUs stays at or below threads x wall however loaded the machine is;
// the factor and the slack cover what a stopping thread books after the settle read and the clocks'
// granularity, far below what a second busy CPU adds.
constexpr double kCpuBudgetFactor = 1.2;
constexpr double kCpuBudgetSlackS = 0.05;
bool exceeds_thread_budget(const AwakeTime& awake, int threads);

class WorkerProcess {
 public:
  // Starts the worker and waits for its hello. On failure returns nullptr and sets `failure`
  // (status kCrashed / kTimeout / kProtocolError with `message`; a load failure says "load:" or
  // "entry:").
  static std::unique_ptr<WorkerProcess> start(const WorkerSpec& spec, CallOutcome& failure);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Resumes the worker, runs the kernel once, and freezes the worker again (SIGSTOP to its process
  // group) so nothing of the candidate runs between calls. On anything but kOk the worker is dead.
  CallOutcome call(double timeout_s);

  // Resumes the worker for one ping and freezes it again. kViolation when the first reply is not
  // the ping's: the candidate replied for a call before kb_run had returned (a forged reply, whose
  // genuine twin arrives late). Any other failure is the worker's death (kCrashed).
  CallOutcome verify_channel(double timeout_s);

  // The worker's awake windows so far (exchanges that failed end the worker and are left out).
  AwakeTime awake() const { return awake_; }

  // Reads the worker's confinement from /proc (the worker is frozen or running; either works).
  WorkerObservation observe() const;
  // The last `max_bytes` of what the worker wrote to stdout/stderr.
  std::string log_tail(std::size_t max_bytes = 4096) const;
  bool alive() const { return alive_; }
  // The layers confining the worker.
  const SandboxReport& sandbox() const { return sandbox_; }
  pid_t pid() const { return pid_; }

 private:
  WorkerProcess() = default;
  bool wait_readable(double deadline_s, CallOutcome& outcome);
  void freeze();
  void thaw();
  void kill_all();
  std::string death_message();
  bool receive_report(double deadline_s, CallOutcome& failure);
  void note_exit(int status);
  std::string forbidden_syscall_in_log() const;
  std::string escaped_the_freeze() const;
  std::vector<TaskSchedstat> settled_schedstats() const;
  // Sends `op` and reads one reply within `timeout_s`; `reply` is valid when it returns true.
  bool exchange(worker::Op op, double timeout_s, worker::Reply& reply, CallOutcome& outcome);

  pid_t pid_ = -1;
  int control_fd_ = -1;
  int log_fd_ = -1;
  bool alive_ = false;
  std::uint32_t sequence_ = 0;
  std::string exit_description_;  // how the worker ended, once reaped
  bool violation_ = false;        // it ended by breaking a sandbox rule
  SandboxReport sandbox_;
  AwakeTime awake_;
};

}  // namespace kbench
