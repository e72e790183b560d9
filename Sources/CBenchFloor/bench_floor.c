#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_floor.h"

static int transfer(int fd, char *buffer, size_t bytes, int writing) {
    size_t done = 0;
    while (done < bytes) {
        ssize_t count = writing ? write(fd, buffer + done, bytes - done) : read(fd, buffer + done, bytes - done);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        done += (size_t)count;
    }
    return 0;
}

int bench_pipe_pingpong(int rounds, size_t bytes, double *samples) {
    int ping[2], pong[2];
    if (pipe(ping) != 0) return errno;
    if (pipe(pong) != 0) return errno;
    char *buffer = calloc(1, bytes);
    pid_t pid = fork();
    if (pid < 0) return errno;
    if (pid == 0) {
        // The child only reads, writes and exits: safe after fork in a threaded process.
        close(ping[1]);
        close(pong[0]);
        while (transfer(ping[0], buffer, bytes, 0) == 0 && transfer(pong[1], buffer, bytes, 1) == 0) {}
        _exit(0);
    }
    close(ping[0]);
    close(pong[1]);
    for (int round = 0; round < rounds; round++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        if (transfer(ping[1], buffer, bytes, 1) != 0 || transfer(pong[0], buffer, bytes, 0) != 0) break;
        clock_gettime(CLOCK_MONOTONIC, &end);
        samples[round] = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
    }
    close(ping[1]);
    close(pong[0]);
    waitpid(pid, NULL, 0);
    free(buffer);
    return 0;
}

#include <sched.h>

static cpu_set_t bench_saved_affinity;
static int bench_pinned;

int bench_pin_to_one_cpu(void) {
    if (sched_getaffinity(0, sizeof bench_saved_affinity, &bench_saved_affinity) != 0) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &bench_saved_affinity)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) return -1;
        bench_pinned = 1;
        return 0;
    }
    return -1;
}

void bench_unpin(void) {
    if (bench_pinned) sched_setaffinity(0, sizeof bench_saved_affinity, &bench_saved_affinity);
    bench_pinned = 0;
}
