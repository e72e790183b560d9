// The entry of `plugboard-child`, the process of an isolated plugin
// (docs/isolation.md): a host starts it with PLUGBOARD_CHILD set and the
// channel's descriptors in place (plugboard_spawn_isolated). Before main and
// before any Swift code runs, while the process has one thread, the sandbox
// the host asked for is applied (sandbox.c), then the child serves the host
// (PlugboardIsolation/IsolatedChildMain.swift) and never returns.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plugboard_host.h"
#include "plugboard_child.h"

// Defined in Swift (PlugboardIsolation/IsolatedChildMain.swift); never returns.
extern void plugboard_isolated_main(int requests, int replies, int log, int storage) __attribute__((noreturn));

int plugboard_child_started_by_host(void) { return 0; }

__attribute__((constructor)) static void plugboard_child_hook(void) {
    const char *protocol = getenv(PLUGBOARD_CHILD_VARIABLE);
    if (protocol == NULL || strcmp(protocol, PLUGBOARD_ISOLATED_PROTOCOL) != 0) return;
    // Not inherited by anything the plugin starts.
    unsetenv(PLUGBOARD_CHILD_VARIABLE);
    // No PR_SET_PDEATHSIG here: it fires when the *thread* that spawned the
    // child ends, and an isolated plugin is restarted from whichever thread
    // calls it. The child watches its request pipe instead (it hangs up when
    // the host dies, however it dies).
    closefrom(PLUGBOARD_ISOLATED_RINGS_FD + 2);
    for (int fd = PLUGBOARD_ISOLATED_REQUESTS_FD; fd <= PLUGBOARD_ISOLATED_RINGS_FD + 1; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    // In its cgroup leaf, then sandboxed: before any Swift code of the child
    // and before its plugin is loaded; the child checks both reports against
    // what the host requires.
    plugboard_cgroup_join_self();
    plugboard_sandbox_apply(2);
    plugboard_isolated_main(PLUGBOARD_ISOLATED_REQUESTS_FD, PLUGBOARD_ISOLATED_REQUESTS_FD + 1, PLUGBOARD_ISOLATED_LOG_FD,
                            PLUGBOARD_ISOLATED_STORAGE_FD);
}
