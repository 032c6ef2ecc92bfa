// Pinning the calling thread for a while: the evaluating thread during gate 3, a breakdown's calls.
#pragma once

#include <sched.h>

#include <vector>

namespace kbench {

// Pins the calling thread and puts its original CPU mask back when it goes out of scope.
class ThreadCpus {
 public:
  ThreadCpus();
  ~ThreadCpus();
  ThreadCpus(const ThreadCpus&) = delete;
  ThreadCpus& operator=(const ThreadCpus&) = delete;
  // Throws HarnessError when the thread cannot be pinned to `cpus`.
  void pin(const std::vector<int>& cpus);

 private:
  cpu_set_t original_;
  bool saved_ = false;
  bool pinned_ = false;
};

}  // namespace kbench
