#define _GNU_SOURCE
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "sandbox_attacks.h"

int attack_unshare(void) { return unshare(CLONE_NEWUSER); }

int attack_ptrace(pid_t pid) {
    if (ptrace(PTRACE_ATTACH, pid, 0, 0) != 0) return -1;
    int status;
    waitpid(pid, &status, __WALL);
    ptrace(PTRACE_DETACH, pid, 0, 0);
    return 0;
}
