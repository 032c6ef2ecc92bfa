// Parsers and readers for /proc/<pid>/task/*/schedstat and /proc/stat.
#include "harness/schedstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "core/text.h"

namespace kbench {
namespace {

// Reads a small /proc file with one read(): these files are generated on read and fit one page.
bool read_small_file(const char* path, std::string& out) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out.resize(4096);
  std::size_t used = 0;
  for (;;) {
    const ssize_t got = read(fd, out.data() + used, out.size() - used);
    if (got <= 0) break;
    used += static_cast<std::size_t>(got);
    if (used == out.size()) out.resize(out.size() * 2);
  }
  close(fd);
  out.resize(used);
  return used > 0;
}

// Skips spaces, then parses one unsigned number; false at the end of the line or on anything else.
bool next_number(std::string_view& text, std::uint64_t& value) {
  std::size_t start = 0;
  while (start < text.size() && text[start] == ' ') ++start;
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end == first) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

// Calls `visit(tid, text)` with the text of /proc/<pid>/task/<tid>/<file> for every thread of
// `pid`, until it returns false; threads that end between listing and reading are skipped.
template <typename Visit>
void for_each_task_file(pid_t pid, const char* file, Visit visit) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::string path, text;
  while (const dirent* entry = readdir(d)) {
    std::int64_t tid = 0;
    const char* name = entry->d_name;
    const char* name_end = name + std::char_traits<char>::length(name);
    const auto [end, ec] = std::from_chars(name, name_end, tid);
    if (ec != std::errc() || end != name_end) continue;  // "." and ".."
    path = dir + "/" + name + "/" + file;
    if (!read_small_file(path.c_str(), text)) continue;
    if (!visit(tid, std::string_view(text))) break;
  }
  closedir(d);
}

}  // namespace

std::optional<TaskSchedstat> parse_schedstat(std::string_view text) {
  TaskSchedstat s;
  std::uint64_t slices = 0;
  if (!next_number(text, s.run_ns) || !next_number(text, s.wait_ns) || !next_number(text, slices))
    return std::nullopt;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  if (!text.empty()) return std::nullopt;
  return s;
}

std::vector<TaskSchedstat> read_task_schedstats(pid_t pid) {
  std::vector<TaskSchedstat> tasks;
  for_each_task_file(pid, "schedstat", [&](std::int64_t tid, std::string_view text) {
    if (auto s = parse_schedstat(text)) {
      s->tid = tid;
      tasks.push_back(*s);
    }
    return true;
  });
  return tasks;
}

std::optional<char> parse_stat_state(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size() || text[close + 1] != ' ')
    return std::nullopt;
  const char state = text[close + 2];
  if (state < 'A' || state > 'z') return std::nullopt;
  return state;
}

std::optional<ThreadState> first_unstopped_thread(pid_t pid) {
  std::optional<ThreadState> found;
  for_each_task_file(pid, "stat", [&](std::int64_t tid, std::string_view text) {
    const std::optional<char> state = parse_stat_state(text);
    if (state && (*state == 'T' || *state == 't' || *state == 'Z' || *state == 'X')) return true;
    found = ThreadState{tid, state.value_or('?')};
    return false;
  });
  return found;
}

SchedDelta sched_delta(const std::vector<TaskSchedstat>& before,
                       const std::vector<TaskSchedstat>& after) {
  SchedDelta d;
  if (before.empty() || after.empty()) return d;
  d.valid = true;
  for (const TaskSchedstat& a : after) {
    const auto b = std::find_if(before.begin(), before.end(),
                                [&](const TaskSchedstat& t) { return t.tid == a.tid; });
    const std::uint64_t run0 = b == before.end() ? 0 : b->run_ns;
    const std::uint64_t wait0 = b == before.end() ? 0 : b->wait_ns;
    // Counters only grow; a smaller value means the tid was reused by a new thread.
    const double run = static_cast<double>(a.run_ns >= run0 ? a.run_ns - run0 : a.run_ns) * 1e-9;
    const double wait =
        static_cast<double>(a.wait_ns >= wait0 ? a.wait_ns - wait0 : a.wait_ns) * 1e-9;
    d.run_s += run;
    if (run >= static_cast<double>(kIdleThreadRunNs) * 1e-9) d.wait_s += wait;
    if (run >= d.busiest_run_s) {
      d.busiest_run_s = run;
      d.busiest_wait_s = wait;
    }
  }
  return d;
}

std::map<int, CpuTicks> parse_proc_stat(std::string_view text) {
  std::map<int, CpuTicks> cpus;
  for (std::string_view line : split_lines(text)) {
    if (!line.starts_with("cpu") || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    line.remove_prefix(3);
    int cpu = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), cpu);
    if (ec != std::errc()) continue;
    line.remove_prefix(static_cast<std::size_t>(end - line.data()));
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    CpuTicks ticks;
    std::uint64_t value = 0;
    for (int field = 0; field < 8 && next_number(line, value); ++field) {
      ticks.total += value;
      if (field == 7) ticks.steal = value;
    }
    cpus[cpu] = ticks;
  }
  return cpus;
}

std::map<int, CpuTicks> read_proc_stat() {
  std::string text;
  if (!read_small_file("/proc/stat", text)) return {};
  return parse_proc_stat(text);
}

double steal_percent(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                     const std::vector<int>& cpus) {
  std::uint64_t total = 0, steal = 0;
  for (int cpu : cpus) {
    const auto b = before.find(cpu), a = after.find(cpu);
    if (b == before.end() || a == after.end() || a->second.total < b->second.total) continue;
    total += a->second.total - b->second.total;
    steal += a->second.steal >= b->second.steal ? a->second.steal - b->second.steal : 0;
  }
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(steal) / static_cast<double>(total);
}

}  // namespace kbench
