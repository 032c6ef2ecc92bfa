// Runs a trusted tool on untrusted input, confined: the candidate's build. The compiler is trusted,
// the source it reads is not: `#include "/root/.ssh/id_rsa"` would print the key in the
// diagnostics, `.incbin` would carry a file into the candidate's object, a 16 GiB array would fill
// the disk. So the build reads only what a build needs, writes only its own directory, and gets
// neither kbench's environment nor a network (docs/security.md, "The build").
#pragma once

#include <string>
#include <vector>

#include "harness/subprocess.h"

namespace kbench {

struct Confinement {
  std::vector<std::string> readable;     // directories and files it may read and execute
  std::string work_dir;                  // its working directory, the one tree it may write
  std::vector<std::string> environment;  // all of its environment ("NAME=value")
  long long address_space_mb = 0;        // RLIMIT_AS of each of its processes; 0: unlimited
  long long file_size_mb = 0;  // RLIMIT_FSIZE, the largest file it may write; 0: unlimited
};

// The layers are named as the eval record lists the build's, "build_*".
struct ConfinedResult : CommandResult {
  std::vector<std::string> layers;   // the confinement's layers in place ("build_landlock_files")
  std::vector<std::string> missing;  // one line each for those this machine refused, with why
};

// The confinement of a tool that kbench runs on a candidate's text (the compiler, llvm-mca):
// reading the system's trees (/usr, /lib*, /opt), the loader's and the locale's files of /etc (not
// /etc/shadow), /dev/null and /dev/urandom, `tool`'s installation where it lies outside them, and
// `readable`; writing only `work_dir`, also its TMPDIR; PATH and the locale's variables for
// environment; 4 GiB of address space a process and 256 MiB a file. Nothing of /home, /root, /tmp
// or /proc: no key file, store, compile cache or process environment.
Confinement tool_confinement(const std::string& tool, const std::string& work_dir,
                             std::vector<std::string> readable = {});

// run_command's contract (argv[0] looked up on kbench's PATH when it has no slash; a deadline that
// kills all the tool started), with the tool confined: Landlock to `confinement`'s trees (where
// the kernel has it), new PID and network namespaces (where kbench is root), its environment and
// resource limits; and where kbench is root, a user of its own that owns `work_dir` while the tool
// runs (everything in it is kbench's again afterwards), when every tree it reads is open to other
// users. The tool starts in `work_dir`: name the files there relative to it, since a user of its
// own may not search the directories above it (the compile cache under /root).
ConfinedResult run_confined(const std::vector<std::string>& argv, const Confinement& confinement,
                            double timeout_s, std::size_t max_output = 16384);

}  // namespace kbench
