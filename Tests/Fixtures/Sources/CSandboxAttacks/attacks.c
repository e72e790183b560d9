#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

int attack_shared_memory(long mebibytes) {
    size_t size = (size_t)(mebibytes > 0 ? mebibytes : 1) << 20;
    int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
    if (id < 0) return -1;
    void *attached = shmat(id, NULL, 0);
    int failure = attached == (void *)-1 ? errno : 0;
    // Removed at once: the segment goes when it is detached, or with the
    // process if a bound ends it mid-write (nothing is left in the system).
    shmctl(id, IPC_RMID, NULL);
    if (failure != 0) {
        errno = failure;
        return -1;
    }
    memset(attached, 1, size);
    shmdt(attached);
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

static int thread_gate[2] = {-1, -1};

static void *parked(void *unused) {
    (void)unused;
    char byte;
    while (read(thread_gate[0], &byte, 1) < 0 && errno == EINTR) {}
    return NULL;
}

int attack_threads(int count) {
    if (pipe(thread_gate) != 0) return -1;
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    int made = 0;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    while (made < count && threads && pthread_create(&threads[made], &attributes, parked, NULL) == 0) made++;
    pthread_attr_destroy(&attributes);
    // Closing the write end wakes every parked thread (read returns 0).
    close(thread_gate[1]);
    for (int index = 0; index < made; index++) pthread_join(threads[index], NULL);
    close(thread_gate[0]);
    free(threads);
    return made;
}

int attack_threads_held(int count) {
    if (pipe(thread_gate) != 0) return -1;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    int made = 0;
    pthread_t thread;
    while (made < count && pthread_create(&thread, &attributes, parked, NULL) == 0) made++;
    pthread_attr_destroy(&attributes);
    // The write end stays open: the threads, and this one, park until the process ends.
    parked(NULL);
    return made;
}

long attack_memory(long mebibytes) {
    long touched = 0;
    for (; touched < mebibytes; touched++) {
        char *chunk = malloc(1 << 20);
        if (!chunk) break;
        memset(chunk, 0x5a, 1 << 20);  // kept: the pages stay charged
    }
    return touched;
}

long attack_spin_until(const char *path) {
    // Tells a reader of the FIFO PATH.ready (if there is one) it spins.
    char ready[4096];
    snprintf(ready, sizeof ready, "%s.ready", path);
    int fd = open(ready, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t ignored = write(fd, "s", 1);
        (void)ignored;
        close(fd);
    }
    long rounds = 0;
    while (access(path, F_OK) != 0) {
        for (volatile int spin = 0; spin < 100000; spin++) {}
        rounds++;
    }
    return rounds;
}
