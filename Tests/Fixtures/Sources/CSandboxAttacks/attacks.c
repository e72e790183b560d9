#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
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

int attack_prlimit_cpu(pid_t pid) {
    struct rlimit limit = {1000, 1000};
    return prlimit(pid, RLIMIT_CPU, &limit, 0);
}

int attack_setown(pid_t pid) {
    int ends[2];
    if (pipe(ends) != 0) return -1;
    int result = fcntl(ends[0], F_SETOWN, pid);
    close(ends[0]);
    close(ends[1]);
    return result;
}
