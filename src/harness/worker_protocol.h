// The wire protocol between kbench and a worker process: fixed file descriptors and 8-byte messages
// on a Unix socket. The worker is untrusted once a candidate is loaded, so kbench validates every
// message and judges results only by the outputs it reads back.
#pragma once

#include <cstdint>

namespace kbench::worker {

// Descriptors the worker inherits at fixed numbers.
constexpr int kInputsFd = 3;   // memfd with the inputs (mapped read-only by the worker)
constexpr int kOutputsFd = 4;  // memfd with the outputs (read-write)
constexpr int kControlFd = 5;  // socket: requests in, replies out
constexpr int kSharedObjectFd =
    6;  // the candidate's shared object, opened by kbench (absent: baseline)
// stdout and stderr go to a log file kbench reads for diagnostics.

// Started as root, a candidate's worker drops to a user and group of its own before loading the
// candidate, drawn by kbench from a range no account uses: it cannot read kbench's or any other
// worker's memory, descriptors or files, cannot signal them, and its process limit (RLIMIT_NPROC
// counts per user) is its alone, so a thread bomb in one evaluation cannot starve another.
constexpr unsigned kSandboxIdBase = 1'500'000'000;
constexpr unsigned kSandboxIdSpan = 1'000'000;

constexpr std::uint32_t kHelloMagic = 0x4b42484c;   // "KBHL"
constexpr std::uint32_t kReportMagic = 0x4b425342;  // "KBSB"
constexpr std::uint32_t kReplyMagic = 0x4b425250;   // "KBRP"

enum class HelloCode : std::int32_t {
  kReady = 0,
  kLoadFailed = 1,  // dlopen failed (unresolved symbol, bad ELF): a build problem of the candidate
  kNoEntryPoint = 2,  // no kb_run with C linkage
  kSetupFailed = 3,   // the worker itself could not start (bad arguments, mapping failed)
};

// The first message, sent once the worker has confined itself and before it loads the candidate,
// so no candidate code has run that could forge it: the sandbox layers it installed and those it
// could not (bits of sandbox::Layer). A worker that failed before confining itself sends both zero.
struct SandboxReport {
  std::uint32_t magic;
  std::uint32_t layers;
  std::uint32_t missing;
  std::int32_t landlock_abi;
};

// Sent after the report, once the kernel is loaded (or could not be).
struct Hello {
  std::uint32_t magic;
  std::int32_t code;
};

// Exit status of a worker whose kb_run let a C++ exception escape (the C ABI has no exceptions).
constexpr int kExitKernelThrew = 70;

// Exit status of a worker whose code called abort() (a failed assert, std::terminate, a check of
// the C library such as its heap or stack-protector checks): the worker's SIGABRT handler ends it
// with this status after writing kAbortLine to its log.
constexpr int kExitAborted = 72;
constexpr const char* kAbortLine = "kbench-worker: abort() was called (SIGABRT)\n";

// kPing is answered like kRun without running the kernel: after a call, the first reply kbench
// reads must be the ping's, so a reply the candidate forged earlier shows up as the genuine one
// arriving late.
enum class Op : std::uint32_t { kRun = 1, kQuit = 2, kPing = 3 };

struct Request {
  std::uint32_t op;
  std::uint32_t sequence;  // echoed in the reply, so a reply written ahead of time is detected
};

struct Reply {
  std::uint32_t magic_xor_sequence;  // kReplyMagic ^ sequence
  std::int32_t kernel_return;        // kb_run's return value
};

}  // namespace kbench::worker
