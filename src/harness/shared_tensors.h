// Tensors in a sealed memfd shared between kbench and a worker process: kbench writes inputs and
// reads outputs there, the worker maps them (inputs without write permission) and hands views to
// kb_run.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/tensor.h"

namespace kbench {

class SharedTensors {
 public:
  // Parent side: a new memfd sized for `specs`, mapped read-write. Its size is sealed, so a worker
  // can neither shrink it (which would make kbench fault on access) nor grow it. With
  // `writable_only_here`, it is also sealed against every write but through this mapping
  // (F_SEAL_FUTURE_WRITE, Linux 5.1): no later mapping can be writable or made writable (mprotect,
  // /proc/<pid>/mem), and write(2) and hole punching fail, so a worker cannot change it at all.
  // Where the kernel refuses that seal, sealed_against_writes() says false.
  static SharedTensors create(const std::vector<TensorSpec>& specs, const char* debug_name,
                              bool writable_only_here = false);
  // Worker side: maps an inherited memfd; `writable` false maps it read-only.
  static SharedTensors attach(int fd, const std::vector<TensorSpec>& specs, bool writable);

  SharedTensors(SharedTensors&& other) noexcept;
  SharedTensors& operator=(SharedTensors&& other) noexcept;
  SharedTensors(const SharedTensors&) = delete;
  SharedTensors& operator=(const SharedTensors&) = delete;
  ~SharedTensors();

  int fd() const { return fd_; }
  std::span<kb_tensor> views() { return views_; }
  std::span<const kb_tensor> views() const { return views_; }
  const std::vector<TensorSpec>& specs() const { return specs_; }

  // Fills every tensor with NaN (floats) or 0x7fffffff (ints) so unwritten elements fail the check.
  void poison();

  // Gives both arenas (of equal size) their memory together, page for page in alternation, so that
  // neither gets physically better-placed pages than the other (on a VM, a host mapping with fewer
  // page-walk misses: two arenas first touched at different moments of the same evaluation streamed
  // 2-4% apart, docs/evaluation.md).
  static void allocate_alike(SharedTensors& a, SharedTensors& b);

  // The memfd carries F_SEAL_FUTURE_WRITE (asked of the kernel now, not remembered).
  bool sealed_against_writes() const;

 private:
  SharedTensors() = default;
  void map(bool writable);

  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::vector<TensorSpec> specs_;
  std::vector<std::size_t> offsets_;
  std::vector<kb_tensor> views_;
};

}  // namespace kbench
