// A ScratchDir whose owner was killed: made by a child process that exits without its destructor,
// as a SIGKILLed kbench does; the kernel drops the child's lock with it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/scratch_dir.h"
#include "proc_support.h"

namespace kbench::testing {

inline std::filesystem::path abandoned_scratch_dir(const std::filesystem::path& root,
                                                   const std::string& prefix) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    ScratchDir* leaked = new ScratchDir(root, prefix);
    const std::string path = leaked->path().string();
    if (write(fds[1], path.data(), path.size()) != static_cast<ssize_t>(path.size())) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  const std::string path = read_until_closed(fds[0]);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(std::filesystem::is_directory(path)) << path;
  return path;
}

}  // namespace kbench::testing
