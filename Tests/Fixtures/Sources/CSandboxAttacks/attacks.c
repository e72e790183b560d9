#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
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

int attack_shared_memory(void) {
    size_t size = 1 << 20;
    int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
    if (id < 0) return -1;
    int failure = 0;
    void *attached = shmat(id, NULL, 0);
    if (attached == (void *)-1) {
        failure = errno;
    } else {
        memset(attached, 1, size);
        shmdt(attached);
    }
    shmctl(id, IPC_RMID, NULL);
    if (failure != 0) {
        errno = failure;
        return -1;
    }
    return 0;
}

int attack_message_queue(void) {
    char name[64];
    snprintf(name, sizeof name, "/plugboard-attack-%d", (int)getpid());
    mqd_t queue = mq_open(name, O_CREAT | O_RDWR, 0600, NULL);
    if (queue == (mqd_t)-1) return -1;
    mq_close(queue);
    mq_unlink(name);
    return 0;
}
