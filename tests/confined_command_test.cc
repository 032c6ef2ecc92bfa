// run_confined, the candidate build's confinement, one layer at a time on small shell commands:
// reads only where it is told, writes only in its directory, sees only its environment, is bounded
// in file size and time, and runs alike for kbench's user when that is not root.
#include "harness/confined_command.h"

#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "proc_support.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// A private directory for the build (its work_dir) beside a file outside it, holding a secret.
class ConfinedCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kbench-confined-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    work_ = root_ / "work";
    fs::create_directory(work_);
    secret_ = root_ / "secret";
    std::ofstream(secret_) << "kbench-confined-secret\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  // The build's trees for a shell: /usr, /lib*, the loader's cache and /dev/null.
  Confinement shell_confinement() const {
    return {{"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/dev/null"},
            work_.string(),
            {"PATH=/usr/bin:/bin", "KBENCH_CONFINED_TEST=1"},
            1024,
            1};
  }
  ConfinedResult sh(const std::string& script, const Confinement& confinement,
                    double timeout_s = 30) const {
    return run_confined({"sh", "-c", script}, confinement, timeout_s);
  }

  fs::path root_, work_, secret_;
};

// Without Landlock, as root, the tool's own user keeps it out of this test's private directory.
bool confined_to_its_trees() {
  return kbench::testing::kernel_has_landlock() || geteuid() == 0;
}

TEST_F(ConfinedCommand, ReadsOnlyTheTreesItIsGiven) {
  if (!confined_to_its_trees()) GTEST_SKIP() << "no Landlock in this kernel, and not root";
  const ConfinedResult r =
      sh("cat " + secret_.string() + "; cat /etc/hostname", shell_confinement());
  // /etc/hostname is outside its trees, though open to every user: only Landlock stops that read.
  if (kbench::testing::kernel_has_landlock()) {
    EXPECT_NE(r.exit_code, 0);
  }
  EXPECT_EQ(r.output.find("kbench-confined-secret"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Permission denied"), std::string::npos) << r.output;
  const char* layer =
      kbench::testing::kernel_has_landlock() ? "build_landlock_files" : "build_unprivileged_user";
  EXPECT_NE(std::find(r.layers.begin(), r.layers.end(), layer), r.layers.end()) << layer;
  // The control: given the secret's directory, the same command reads it.
  Confinement wider = shell_confinement();
  wider.readable.push_back(root_.string());
  EXPECT_NE(sh("cat " + secret_.string(), wider).output.find("kbench-confined-secret"),
            std::string::npos);
}

TEST_F(ConfinedCommand, WritesOnlyInItsOwnDirectory) {
  if (!confined_to_its_trees()) GTEST_SKIP() << "no Landlock in this kernel, and not root";
  const ConfinedResult r = sh("echo in > inside; echo out > " + (root_ / "outside").string() +
                                  "; mkdir sub && echo deeper > sub/file && rm inside",
                              shell_confinement());
  EXPECT_FALSE(fs::exists(root_ / "outside")) << r.output;
  EXPECT_TRUE(fs::exists(work_ / "sub" / "file")) << r.output;
  EXPECT_FALSE(fs::exists(work_ / "inside")) << "removing in its directory is allowed";
}

TEST_F(ConfinedCommand, SeesOnlyItsEnvironment) {
  ASSERT_EQ(setenv("KBENCH_CONFINED_SECRET", "kbench-confined-secret", 1), 0);
  const ConfinedResult r = sh("env", shell_confinement());
  unsetenv("KBENCH_CONFINED_SECRET");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("kbench-confined-secret"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("KBENCH_CONFINED_TEST=1"), std::string::npos) << r.output;
}

TEST_F(ConfinedCommand, AFileBeyondItsSizeLimitEndsTheWriter) {
  Confinement one_mib = shell_confinement();
  one_mib.readable.push_back("/dev/zero");
  const ConfinedResult r = sh("head -c 2097152 /dev/zero > big", one_mib);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LE(fs::file_size(work_ / "big"), 1u << 20);
}

TEST_F(ConfinedCommand, TheDeadlineEndsAllItStarted) {
  const auto start = std::chrono::steady_clock::now();
  // The shell waits on a child that would outlive it: the deadline must not wait for either.
  const ConfinedResult r = sh("sleep 30 & sleep 30; wait", shell_confinement(), 0.5);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(seconds, 5.0);
}

// The pid of the process whose command line is `command` (its arguments joined by spaces), or 0.
pid_t process_running(const std::string& command) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (!std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmdline;
    std::getline(std::ifstream(entry.path() / "cmdline"), cmdline);
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (cmdline == command + " " && testing::process_alive(pid)) return pid;
  }
  return 0;
}

TEST_F(ConfinedCommand, TheToolDiesWithKbench) {
  // A tool that writes nothing and uses no CPU, run by a child standing for kbench, which is
  // killed.
  const std::string command = "sleep 61.2345";
  const pid_t kbench = fork();
  ASSERT_GE(kbench, 0);
  if (kbench == 0) {
    sh("exec " + command, shell_confinement(), 120);
    _exit(0);
  }
  pid_t tool = 0;
  for (int tries = 0; tries < 200 && tool == 0; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    tool = process_running(command);
  }
  ASSERT_EQ(kill(kbench, SIGKILL), 0);
  ASSERT_EQ(waitpid(kbench, nullptr, 0), kbench);
  ASSERT_NE(tool, 0) << "the tool never started";
  for (int tries = 0; tries < 100 && process_running(command) != 0; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t survivor = process_running(command);
  if (survivor != 0) kill(survivor, SIGKILL);
  EXPECT_EQ(survivor, 0) << "the confined tool outlived the kbench that ran it";
}

// As root, the tool runs as a user of its own (a file only root may read, a key file, is then out
// of its reach even without Landlock: tests/adversarial's includes_host_file under
// tests/kernel_without_landlock), in a directory of this test's private one (mode 0700), and what
// it made there is root's again afterwards.
TEST_F(ConfinedCommand, AsRootTheToolRunsAsAUserOfItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give the tool a user of its own";
  // What kbench wrote for the tool is the tool's to read, whatever kbench's umask.
  std::ofstream(work_ / "given") << "given\n";
  ASSERT_EQ(chmod((work_ / "given").c_str(), 0600), 0);
  const ConfinedResult r = sh("id -u; cat given; echo made > made", shell_confinement());
  ASSERT_EQ(r.exit_code, 0) << r.output << r.error;
  EXPECT_NE(std::find(r.layers.begin(), r.layers.end(), "build_unprivileged_user"), r.layers.end());
  const long user = std::stol(r.output);
  EXPECT_GE(user, 1'500'000'000L) << "not a user of kbench's sandbox range";
  EXPECT_NE(r.output.find("\ngiven\n"), std::string::npos) << r.output;
  struct stat made {};
  ASSERT_EQ(stat((work_ / "made").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, 0u) << "what the tool made stayed its user's";
  struct stat work {};
  ASSERT_EQ(stat(work_.c_str(), &work), 0);
  EXPECT_EQ(work.st_uid, 0u) << "the tool's directory stayed its user's";
}

// A tree the tool must read that other users cannot (here a file of mode 0600) keeps the tool
// root's, since a user of its own could not build, and the result says which path stopped it.
TEST_F(ConfinedCommand, AsRootATreeClosedToOthersKeepsRootAndSaysWhich) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give the tool a user of its own";
  ASSERT_EQ(chmod(secret_.c_str(), 0600), 0);
  Confinement reading_the_secret = shell_confinement();
  reading_the_secret.readable.push_back(secret_.string());
  const ConfinedResult r = sh("id -u; cat " + secret_.string(), reading_the_secret);
  EXPECT_EQ(r.exit_code, 0) << r.output << r.error;
  EXPECT_TRUE(r.output.starts_with("0\n")) << r.output;
  const std::string refusal = "build_unprivileged_user: " + root_.string() +
                              " is closed to other users, so the build keeps root";
  EXPECT_NE(std::find(r.missing.begin(), r.missing.end(), refusal), r.missing.end())
      << ::testing::PrintToString(r.missing);
}

TEST_F(ConfinedCommand, RunsInNewNamespacesForAUserWhoIsNotRoot) {
  // As root, a user of no account, owning the build's directory, runs the build from a child of
  // this test; otherwise the test's own user does.
  const bool root = geteuid() == 0;
  const uid_t user = root ? 64999 : geteuid();
  if (root) {
    ASSERT_EQ(chmod(root_.c_str(), 0755), 0);
    ASSERT_EQ(chown(work_.c_str(), user, user), 0);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (root && (setgroups(0, nullptr) != 0 || setresgid(user, user, user) != 0 ||
                 setresuid(user, user, user) != 0))
      _exit(2);
    // Not dumpable, as kbench makes itself (src/cli/main.cc): its children's /proc files, uid_map
    // among them, are root's until they execute something.
    prctl(PR_SET_DUMPABLE, 0);
    const ConfinedResult r = sh("echo made > made; echo pid=$$", shell_confinement());
    const bool namespaced =
        std::find(r.layers.begin(), r.layers.end(), "build_namespaces") != r.layers.end();
    // In its PID namespace the shell is process 1.
    const bool first = r.output.find("pid=1\n") != std::string::npos;
    std::fprintf(stderr, "%s%s\n", r.output.c_str(), r.error.c_str());
    for (const std::string& line : r.missing) std::fprintf(stderr, "missing %s\n", line.c_str());
    const bool kernel_refuses = std::any_of(r.missing.begin(), r.missing.end(), [](auto& line) {
      return line.starts_with("build_namespaces: clone refused it");
    });
    _exit(kernel_refuses ? 4 : r.exit_code == 0 && namespaced && first ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 4) GTEST_SKIP() << "this kernel gives users no user namespaces";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the confined build failed for a user who is not root";
  struct stat made {};
  ASSERT_EQ(stat((work_ / "made").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, user) << "the build's files belong to kbench's user";
}

}  // namespace
}  // namespace kbench
