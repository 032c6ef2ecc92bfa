// kbench as root of a user namespace that maps only that root (a rootless container: its users map
// onto a few ids of the host's, none of the sandbox's range). The worker and the build cannot drop
// to a user of their own there; they keep kbench's, say so, and every other layer holds. Until
// 2026-12-05 every evaluation there ended in "setup: cannot drop privileges".
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "proc_support.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using kbench::testing::kbench_exe;
using kbench::testing::source_path;

constexpr int kNoUserNamespace = 120;

bool write_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY);
  if (fd < 0) return false;
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return written;
}

// `kbench eval --json` of a test candidate in a new user namespace mapping this test's user onto
// root and nothing else; its output and exit status (kNoUserNamespace where the kernel refused it).
std::pair<std::string, int> eval_in_user_namespace(const std::string& candidate) {
  int out[2];
  if (pipe(out) != 0) return {"", -1};
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  const pid_t child = fork();
  if (child < 0) return {"", -1};
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (unshare(CLONE_NEWUSER) != 0 || !write_file("/proc/self/setgroups", "deny") ||
        !write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
      _exit(kNoUserNamespace);
    // A cache of its own, so that the candidate is built there, with the machine's figures copied
    // in where they were measured already (20-60 s to measure again).
    const fs::path cache = fs::temp_directory_path() / "userns-cache";
    kbench::testing::seed_machine_cache(cache);
    setenv("KBENCH_CACHE", cache.c_str(), 1);
    const std::string exe = kbench_exe(), db = (fs::temp_directory_path() / "userns.db").string();
    execl(exe.c_str(), "kbench", "eval", "-w", "12p", "-c", candidate.c_str(), "--size", "smoke",
          "--timeout-s", "5", "--time-budget-s", "0.3", "--json", "--db", db.c_str(), nullptr);
    _exit(121);
  }
  close(out[1]);
  std::string text = kbench::testing::read_until_closed(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST(UserNamespace, AnEvalAsItsRootKeepsKbenchsUserAndSaysWhy) {
  const auto [text, code] =
      eval_in_user_namespace(source_path("tests/adversarial/correct_naive.cpp"));
  if (code == kNoUserNamespace) GTEST_SKIP() << "this kernel gives no user namespace";
  ASSERT_EQ(code, 0) << text;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_EQ(j["status"], "correct") << j.dump(2);
  const nlohmann::json& sandbox = j["sandbox"];
  const auto has = [](const nlohmann::json& list, const std::string& prefix) {
    return std::any_of(list.begin(), list.end(), [&](const nlohmann::json& entry) {
      return entry.get<std::string>().starts_with(prefix);
    });
  };
  const std::string why = "kbench's user namespace maps no user id of the sandbox's range, so ";
  EXPECT_TRUE(has(sandbox["missing"], "unprivileged_user: " + why + "the worker keeps"))
      << sandbox.dump(2);
  EXPECT_TRUE(has(sandbox["missing"], "build_unprivileged_user: " + why + "the build keeps"))
      << sandbox.dump(2);
  for (const char* layer : {"seccomp", "resource_limits", "own_output_arena",
                            "build_environment_allowlist", "build_resource_limits"})
    EXPECT_TRUE(has(sandbox["layers"], layer)) << layer << " missing: " << sandbox.dump(2);
}

}  // namespace
}  // namespace kbench
