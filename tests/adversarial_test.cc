// Every hostile or sloppy candidate in tests/adversarial/ goes through the real `kbench eval`
// (compiler, worker process, checker) and must get the verdict its first line promises, with kbench
// exiting 0; and whatever the verdict, the evaluation must leave no trace outside: no secret from
// kbench's environment or from a key file in its output, no connection to a local listener, no file
// outside the sandbox, no process of the candidate alive.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"
#include "proc_support.h"

namespace kbench::testing {
namespace {

// What tests/adversarial/connects_localhost.cpp connects to.
constexpr std::uint16_t kListenerPort = 47391;
// In kbench's environment for every evaluation (tests/adversarial/reads_env_secret.cpp hunts it).
constexpr const char* kSecretName = "KBENCH_ADVERSARIAL_SECRET";
constexpr const char* kSecretValue = "kbench-secret-value";
// A key file holding the same value, kbench's user's alone
// (tests/adversarial/includes_host_file.cpp and incbin_host_file.cpp try to read it through the
// build).
constexpr const char* kSecretFile = "/tmp/kbench-adversarial-secret";
// Prefix of every file a candidate tries to create outside its sandbox, in these directories.
constexpr const char* kOutsidePrefix = "kbench-adversarial-outside-";
const char* const kOutsideDirs[] = {"/tmp", "/dev/shm"};
// A process a candidate started may take a moment to die after kbench returns (an asynchronous
// kill, a namespace being torn down); longer than this, it has escaped.
constexpr auto kSurvivorGrace = std::chrono::seconds(2);
// Task names are cut to 15 characters by the kernel (TASK_COMM_LEN 16).
constexpr std::size_t kMaxTaskName = 15;

std::vector<std::string> adversarial_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("tests/adversarial")))
    if (entry.path().extension() == ".cpp") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The markers at the top of a candidate: `// expect: <status>` on the first line and, on the
// second, `// expect-speedup-below: <x>` for candidates whose attack would show as speed, or
// `// expect-needs: landlock` for those only Landlock stops where kbench is not root (kbench's own
// user could read the file; as root, the build runs as a user of its own, who cannot). Any line
// of the opening comment may hold `// expect-error: <text>`, a text the verdict's error must hold.
struct Expectation {
  std::string status;
  std::optional<double> speedup_below;
  bool needs_landlock = false;
  std::optional<std::string> error_holds;
  std::vector<std::string> task_names;  // every "kbx-..." name the candidate gives its tasks
};

Expectation expectation_of(const std::string& path) {
  Expectation e;
  const std::string source = read_text(path);
  std::istringstream lines(source);
  std::string line;
  const std::string status_marker = "// expect: ", speedup_marker = "// expect-speedup-below: ",
                    error_marker = "// expect-error: ";
  if (std::getline(lines, line) && line.starts_with(status_marker))
    e.status = line.substr(status_marker.size());
  if (std::getline(lines, line) && line.starts_with(speedup_marker))
    e.speedup_below = std::stod(line.substr(speedup_marker.size()));
  e.needs_landlock = line == "// expect-needs: landlock";
  while (line.starts_with("//")) {
    if (line.starts_with(error_marker)) e.error_holds = line.substr(error_marker.size());
    if (!std::getline(lines, line)) break;
  }
  // The names are string literals in the source: "kbx-<short>".
  for (std::size_t at = source.find("\"kbx-"); at != std::string::npos;
       at = source.find("\"kbx-", at + 1)) {
    const std::size_t end = source.find('"', at + 1);
    if (end != std::string::npos) e.task_names.push_back(source.substr(at + 1, end - at - 1));
  }
  return e;
}

// A TCP listener on 127.0.0.1:kListenerPort for the length of one evaluation. SO_REUSEPORT lets
// the cases CTest runs in parallel each hold one; a connection then lands in one of them, and that
// case fails (possibly not the connecting candidate's: the failure still shows).
class LocalListener {
 public:
  LocalListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    const int on = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kListenerPort);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(fd_, 16) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~LocalListener() {
    if (fd_ >= 0) close(fd_);
  }
  bool listening() const { return fd_ >= 0; }
  // Connections completed since the listener opened (the kernel queues them without accept).
  int connections() {
    int n = 0;
    for (int c; (c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++n) close(c);
    return n;
  }

 private:
  int fd_ = -1;
};

// The names in a directory, or none if it is gone (a process may end while it is read).
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* entry = readdir(d))
      if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
    closedir(d);
  }
  return names;
}

// The state letter of a task's stat file ('R', 'S', 'T', 'Z', ...); 0 if it is gone.
char task_state(const std::string& task_dir) {
  std::string stat;
  std::getline(std::ifstream(task_dir + "/stat"), stat);
  const std::size_t close_paren = stat.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < stat.size() ? stat[close_paren + 2]
                                                                           : 0;
}

// Tasks alive now whose name starts with one of `names`: "pid/tid name" each, and their pids.
// Zombies are dead (killed, waiting for a reaper) and do not count.
std::vector<std::string> tasks_named(const std::vector<std::string>& names, std::set<pid_t>& pids) {
  std::vector<std::string> found;
  for (const std::string& pid : entries_of("/proc")) {
    if (!std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    for (const std::string& tid : entries_of("/proc/" + pid + "/task")) {
      const std::string task_dir = "/proc/" + pid + "/task/" + tid;
      std::string comm;
      std::getline(std::ifstream(task_dir + "/comm"), comm);
      const bool named = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
        return comm.starts_with(name);
      });
      if (!named) continue;
      const char state = task_state(task_dir);
      if (state == 0 || state == 'Z' || state == 'X') continue;
      found.push_back(pid + "/" + tid + " " + comm);
      pids.insert(static_cast<pid_t>(std::stol(pid)));
    }
  }
  return found;
}

// Waits up to kSurvivorGrace for the candidate's named tasks to be gone and returns those that were
// not. Those are then killed (again and again for a while: a fork bomb refills its ranks), so one
// escapee does not disturb the cases after it.
std::vector<std::string> survivors(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  const auto deadline = std::chrono::steady_clock::now() + kSurvivorGrace;
  std::set<pid_t> pids;
  std::vector<std::string> alive;
  while (!(alive = tasks_named(names, pids)).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (auto stop = std::chrono::steady_clock::now() + kSurvivorGrace;
       !pids.empty() && std::chrono::steady_clock::now() < stop;) {
    for (pid_t pid : pids) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pids.clear();
    tasks_named(names, pids);
  }
  return alive;
}

// Files a candidate created outside its sandbox; removed once seen, so they are reported once.
std::vector<std::string> outside_files() {
  std::vector<std::string> found;
  for (const char* dir : kOutsideDirs) {
    for (const std::string& name : entries_of(dir)) {
      if (!name.starts_with(kOutsidePrefix)) continue;
      found.push_back(std::string(dir) + "/" + name);
      std::error_code ec;
      std::filesystem::remove(found.back(), ec);
    }
  }
  return found;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

TEST(AdversarialFiles, TaskNamesAreUniqueAndFitTheKernelsLimit) {
  std::map<std::string, std::string> owner;
  for (const std::string& file : adversarial_files()) {
    const std::vector<std::string> names =
        expectation_of(source_path("tests/adversarial/" + file)).task_names;
    for (const std::string& name : std::set<std::string>(names.begin(), names.end())) {
      EXPECT_LE(name.size(), kMaxTaskName) << file << ": " << name << " would be cut short";
      const auto [it, fresh] = owner.emplace(name, file);
      EXPECT_TRUE(fresh) << name << " is used by both " << it->second << " and " << file;
    }
  }
}

class AdversarialCandidate : public ::testing::TestWithParam<std::string> {};

TEST_P(AdversarialCandidate, GetsItsExpectedVerdictAndLeavesNothingBehind) {
  const std::string path = source_path("tests/adversarial/" + GetParam());
  const Expectation expected = expectation_of(path);
  ASSERT_FALSE(expected.status.empty()) << path << " lacks a '// expect: <status>' first line";
  if (expected.needs_landlock && !kbench::testing::kernel_has_landlock() && geteuid() != 0)
    GTEST_SKIP() << "this kernel has no Landlock, which is what stops this attack where kbench is "
                    "not root";
  // The secret reaches kbench through its environment, as API keys do, and is in a key file.
  ASSERT_EQ(setenv(kSecretName, kSecretValue, 1), 0);
  {
    std::ofstream key(kSecretFile, std::ios::trunc);
    key << kSecretValue << "\n";
    ASSERT_TRUE(key.good()) << "cannot write " << kSecretFile;
  }
  ASSERT_EQ(chmod(kSecretFile, 0600), 0);
  LocalListener listener;
  ASSERT_TRUE(listener.listening())
      << "cannot listen on 127.0.0.1:" << kListenerPort << ": " << std::strerror(errno);

  const CliRun run = run_kbench("eval --workload 12p_RMSNorm --size smoke --candidate " + path +
                                " --timeout-s 2 --warmup 2 --iters 10 --max-iters 10 --json --db " +
                                temp_db(GetParam()));

  // What the candidate may have left behind is checked first: these must hold whatever the verdict.
  EXPECT_EQ(listener.connections(), 0)
      << "a candidate connected to 127.0.0.1:" << kListenerPort << " during the evaluation";
  const std::vector<std::string> files = outside_files();
  EXPECT_TRUE(files.empty()) << "created outside the sandbox: " << joined(files);
  const std::vector<std::string> alive = survivors(expected.task_names);
  EXPECT_TRUE(alive.empty()) << "outlived the evaluation (now killed): " << joined(alive);
  EXPECT_EQ(run.out.find(kSecretValue), std::string::npos) << "the secret is in kbench's output";

  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["status"], expected.status) << "error: " << result["error"] << "\n"
                                               << result["diagnostics"];
  if (expected.status == "correct") {
    EXPECT_TRUE(result["correctness"]["passed"].get<bool>());
    EXPECT_EQ(result["candidate"]["iters"], 10);
  } else {
    // For `rejected` this names the rule broken (the syscall, the forged reply, ...).
    EXPECT_FALSE(result["error"].get<std::string>().empty());
    if (expected.error_holds) {
      EXPECT_NE(result["error"].get<std::string>().find(*expected.error_holds), std::string::npos)
          << "error: " << result["error"];
    }
    EXPECT_TRUE(result["candidate"].is_null()) << "timing is reported only for correct candidates";
  }
  if (expected.speedup_below) {
    ASSERT_TRUE(result["speedup"].is_number()) << "no speedup reported";
    EXPECT_LT(result["speedup"].get<double>(), *expected.speedup_below)
        << "an honest but deliberately slow kernel looked this fast: the attack worked";
  }
}

// kbench's workers (children named kbench-worker) and the CPU ticks each has used.
std::map<pid_t, long> workers_of(pid_t kbench) {
  std::map<pid_t, long> workers;
  for (const std::string& entry : entries_of("/proc")) {
    if (!std::isdigit(static_cast<unsigned char>(entry[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(entry));
    std::string comm;
    std::getline(std::ifstream("/proc/" + entry + "/comm"), comm);
    const std::vector<std::string> f = stat_fields(pid);
    // f[0] state, f[1] ppid, f[11] utime, f[12] stime.
    if (comm == "kbench-worker" && f.size() > 12 && std::stol(f[1]) == kbench)
      workers[pid] = std::stol(f[11]) + std::stol(f[12]);
  }
  return workers;
}

// kbench killed mid-call (SIGKILL; SIGTERM and Ctrl-C end it the same way outside a suite's
// pauses) takes its workers along, the candidate spinning in kb_run among them. The worker's drop
// to a user of its own clears the parent-death signal; without it set again, the worker ran on.
TEST(AdversarialKill, AKilledKbenchLeavesNoWorkerRunning) {
  const std::string exe = kbench_exe(), db = temp_db("killed_kbench"),
                    candidate = source_path("tests/adversarial/infinite_loop.cpp");
  const pid_t kbench = fork();
  ASSERT_GE(kbench, 0);
  if (kbench == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(exe.c_str(), exe.c_str(), "eval", "--workload", "12p", "--size", "smoke", "--candidate",
          candidate.c_str(), "--timeout-s", "120", "--db", db.c_str(), nullptr);
    _exit(127);
  }
  // Until the candidate's worker has spun for a second of CPU time inside kb_run.
  std::map<pid_t, long> workers;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  while (std::chrono::steady_clock::now() < deadline) {
    workers = workers_of(kbench);
    if (std::any_of(workers.begin(), workers.end(),
                    [&](const auto& w) { return w.second >= ticks_per_second; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(kill(kbench, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(kbench, &status, 0), kbench);
  ASSERT_FALSE(workers.empty()) << "no worker spun in kb_run within 120 s";

  std::vector<pid_t> running;
  for (auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       std::chrono::steady_clock::now() < stop;) {
    running.clear();
    for (const auto& [pid, ticks] : workers)
      if (process_alive(pid)) running.push_back(pid);
    if (running.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const pid_t pid : running) kill(pid, SIGKILL);
  EXPECT_TRUE(running.empty()) << running.size() << " of " << workers.size()
                               << " workers outlived their killed kbench (now killed)";
}

INSTANTIATE_TEST_SUITE_P(Files, AdversarialCandidate, ::testing::ValuesIn(adversarial_files()),
                         [](const ::testing::TestParamInfo<std::string>& file) {
                           std::string name = file.param.substr(0, file.param.size() - 4);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace kbench::testing
