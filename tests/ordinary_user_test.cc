// kbench run by an ordinary user, as most of its users run it. Every layer of the build and of the
// worker is in place but the worker's own user, which only root can give it, and kbench's
// environment stays closed to a worker that shares kbench's user. The switch to another user needs
// root: run as anyone else, the suite is that ordinary user, and these tests are skipped.
#include <grp.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "core/environment.h"
#include "proc_support.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using kbench::testing::kbench_exe;
using kbench::testing::source_path;

constexpr uid_t kUser = 64998;  // no account's
// As tests/adversarial/README.md's secret: an API key in kbench's environment.
constexpr const char* kSecret = "KBENCH_ADVERSARIAL_SECRET=kbench-secret-value";

// A home for kUser beneath the tests' temporary root (as /tmp: every user may write there), with
// the machine's figures copied in where they were measured already (20-60 s to measure again).
fs::path ordinary_home(const std::string& name) {
  const fs::path home = fs::temp_directory_path() / name;
  kbench::testing::seed_machine_cache(home / ".cache" / "kbench");
  if (lchown(home.c_str(), kUser, kUser) != 0) return {};
  for (const auto& entry : fs::recursive_directory_iterator(home))
    if (lchown(entry.path().c_str(), kUser, kUser) != 0) return {};
  return home;
}

// In a forked child: drops every group and becomes kUser for good; false where that failed.
bool become_ordinary_user() {
  return setgroups(0, nullptr) == 0 && setresgid(kUser, kUser, kUser) == 0 &&
         setresuid(kUser, kUser, kUser) == 0;
}

// `kbench eval` of a test candidate as kUser, with `home` as its HOME and `environment_entry` added
// to its environment; the JSON verdict, or nothing where kbench printed none.
nlohmann::json eval_as_ordinary_user(const fs::path& home, const std::string& candidate,
                                     const char* environment_entry = nullptr) {
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t child = fork();
  if (child < 0) return {};
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (!become_ordinary_user()) _exit(120);
    setenv("HOME", home.c_str(), 1);
    unsetenv("KBENCH_CACHE");
    unsetenv("XDG_CACHE_HOME");
    if (environment_entry) putenv(const_cast<char*>(environment_entry));
    const std::string exe = kbench_exe(), db = (home / "kbench.db").string();
    execl(exe.c_str(), "kbench", "eval", "-w", "12p", "-c", candidate.c_str(), "--size", "smoke",
          "--timeout-s", "5", "--time-budget-s", "0.3", "--json", "--db", db.c_str(), nullptr);
    _exit(121);
  }
  close(out[1]);
  const std::string text = kbench::testing::read_until_closed(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n" << text;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Whether kUser may make the namespaces kbench makes for it (user, PID, network): a kernel or
// container that refuses ordinary users them (a sysctl, a security module's policy, a seccomp
// profile) takes the namespace layers from kbench too, and the verdict then lists them as missing.
bool ordinary_user_gets_namespaces() {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    if (!become_ordinary_user()) _exit(2);
    _exit(unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET) == 0 ? 0 : 1);
  }
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool has(const nlohmann::json& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

TEST(OrdinaryUser, AnEvalHasEveryLayerButTheWorkersOwnUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  const fs::path home = ordinary_home("ordinary-user-eval");
  ASSERT_FALSE(home.empty());
  const nlohmann::json j =
      eval_as_ordinary_user(home, source_path("tests/adversarial/correct_naive.cpp"));
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["status"], "correct") << j.dump(2);
  const nlohmann::json& sandbox = j["sandbox"];
  for (const char* layer :
       {"build_environment_allowlist", "build_resource_limits", "environment_allowlist",
        "private_directory", "own_output_arena", "seccomp", "resource_limits"})
    EXPECT_TRUE(has(sandbox["layers"], layer)) << layer << " missing: " << sandbox.dump(2);
  const bool landlock = kbench::testing::kernel_has_landlock();
  for (const char* layer : {"build_landlock_files", "landlock_files"})
    EXPECT_EQ(has(sandbox["layers"], layer), landlock) << layer << ": " << sandbox.dump(2);
  const bool namespaces = ordinary_user_gets_namespaces();
  for (const char* layer : {"build_namespaces", "pid_namespace", "net_namespace"})
    EXPECT_EQ(has(sandbox["layers"], layer), namespaces) << layer << ": " << sandbox.dump(2);
  ASSERT_FALSE(sandbox["missing"].empty()) << sandbox.dump(2);
  // The two layers only root can give; Landlock's layers too where the kernel lacks Landlock, and
  // the namespaces where it refuses them to an ordinary user.
  for (const auto& line : sandbox["missing"]) {
    const std::string refusal = line;
    const bool namespace_refused = refusal.starts_with("build_namespaces:") ||
                                   refusal.starts_with("pid_namespace") ||
                                   refusal.starts_with("net_namespace");
    EXPECT_TRUE(refusal.starts_with("unprivileged_user:") ||
                refusal.starts_with("build_unprivileged_user:") ||
                refusal.find("Landlock") != std::string::npos ||
                refusal.find("landlock") != std::string::npos || (namespace_refused && !namespaces))
        << refusal;
  }
  EXPECT_FALSE(has(sandbox["layers"], "unprivileged_user"));
  EXPECT_FALSE(has(sandbox["layers"], "build_unprivileged_user"));
}

// The worker keeps kbench's user here, so kbench's environment (API keys) would be the same
// user's to read: the candidate that looks for a secret there finds nothing (kbench not dumpable,
// the worker's PID namespace and scrubbed environment) and stays correct.
TEST(OrdinaryUser, KbenchsEnvironmentStaysClosedToAWorkerOfItsOwnUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  const fs::path home = ordinary_home("ordinary-user-secret");
  ASSERT_FALSE(home.empty());
  const nlohmann::json j =
      eval_as_ordinary_user(home, source_path("tests/adversarial/reads_env_secret.cpp"), kSecret);
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["status"], "correct") << j.dump(2);
  EXPECT_EQ(j.dump().find("kbench-secret-value"), std::string::npos) << j.dump(2);
}

}  // namespace
}  // namespace kbench
