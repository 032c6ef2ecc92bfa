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

struct WorkerSpec {
  std::string worker_exe;  // path of kbench-worker
  const Workload* workload = nullptr;
  Size size = Size::kSmoke;
  int threads = 1;
  std::vector<int> cpus;  // CPUs the worker is pinned to (threads of them)
  std::string so_path;    // candidate shared object; empty runs the built-in baseline
  // The candidate's seat: the whole sandbox, whatever runs in it (a candidate, or the baseline in
  // an A/A check, which so measures what the sandbox costs).
  bool sandboxed = false;
  long long mem_limit_mb = 0;
  double cpu_limit_s =
      0;                // candidates: RLIMIT_CPU over the worker's life (a backstop to deadlines)
  int inputs_fd = -1;   // memfd with the inputs (the worker maps it read-only)
  int outputs_fd = -1;  // memfd with this worker's outputs
  double startup_timeout_s = 10;
  std::string gemm_plan;  // baselines only: ops::set_gemm_plan's encoding of the chosen GEMM paths
};

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

  // Pins every thread of the (frozen) worker to `cpus`; threads it creates later inherit the mask.
  // False, with the reason in `error`, when a thread could not be moved.
  bool move_to_cpus(const std::vector<int>& cpus, std::string& error);

  // CPU time (user + system, all threads, live and exited) the worker has used so far.
  double cpu_seconds() const;
  // The last `max_bytes` of what the worker wrote to stdout/stderr.
  std::string log_tail(std::size_t max_bytes = 4096) const;
  bool alive() const { return alive_; }
  // The layers confining a candidate's worker (empty for a baseline's).
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
  bool sandboxed_ = false;        // the candidate's seat: held to the sandbox's rules
  SandboxReport sandbox_;
};

}  // namespace kbench
