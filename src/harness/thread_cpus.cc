#include "harness/thread_cpus.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "harness/evaluator.h"

namespace kbench {

ThreadCpus::ThreadCpus() {
  saved_ = sched_getaffinity(0, sizeof original_, &original_) == 0;
}

ThreadCpus::~ThreadCpus() {
  if (saved_ && pinned_) sched_setaffinity(0, sizeof original_, &original_);
}

void ThreadCpus::pin(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw HarnessError(std::string("cannot pin the evaluating thread: ") + std::strerror(errno));
  pinned_ = true;
}

}  // namespace kbench
