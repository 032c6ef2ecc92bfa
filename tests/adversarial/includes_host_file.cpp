// expect: compile_error
// expect-needs: landlock
// Attack class: reading a host file through the build. The preprocessor opens whatever path an
// #include names, as kbench's user, and the diagnostics quote the lines it cannot parse: a key file
// (the test writes /tmp/kbench-adversarial-secret, holding the secret value, as a key file would)
// would be printed in the verdict, stored with it and, in an agent's loop, sent to the model as
// feedback. The build may read only the toolchain's trees and kbench's headers (Landlock), and as
// root it runs as a user of its own, who may not read a file of mode 0600: either way the #include
// fails with "Permission denied" and nothing of the file reaches the diagnostics. Had the build
// read it, the verdict would still be compile_error (the secret is no C++, and there is no kb_run);
// the test's check that the secret is not in kbench's output is what this candidate is for.
#include "/tmp/kbench-adversarial-secret"
