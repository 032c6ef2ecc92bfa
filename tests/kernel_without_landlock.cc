// kernel_without_landlock COMMAND [ARG...]: runs COMMAND as it would run on a kernel without
// Landlock that also refuses new namespaces (an older kernel; a container whose seccomp profile
// refuses both). A seccomp filter, inherited by everything COMMAND starts, answers Landlock's
// system calls with ENOSYS, as such a kernel does, and the creation of namespaces with EPERM;
// everything else is allowed. kbench's sandbox must then stop every attack with the layers left.
#include <sched.h>
#include <unistd.h>

#include <seccomp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kernel_without_landlock COMMAND [ARG...]\n");
    return 2;
  }
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (!filter) return 1;
  bool ok = true;
  for (const int call : {SCMP_SYS(landlock_create_ruleset), SCMP_SYS(landlock_add_rule),
                         SCMP_SYS(landlock_restrict_self)})
    ok = ok && seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), call, 0) == 0;
  // clone's flags are its first argument; clone3's are in memory, which a filter cannot read, so
  // clone3 is absent altogether (glibc then falls back to clone).
  for (const scmp_datum_t flag : {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS,
                                  CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP})
    ok = ok && seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
  ok = ok && seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
  for (const int call : {SCMP_SYS(unshare), SCMP_SYS(setns)})
    ok = ok && seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), call, 0) == 0;
  if (!ok || seccomp_load(filter) != 0) {
    std::fprintf(stderr, "kernel_without_landlock: cannot install the filter\n");
    return 1;
  }
  seccomp_release(filter);
  execvp(argv[1], argv + 1);
  std::fprintf(stderr, "kernel_without_landlock: cannot execute %s: %s\n", argv[1],
               std::strerror(errno));
  return 127;
}
