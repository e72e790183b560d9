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

static int pin_to(pid_t pid, int cpu);

// The peer of a pipe ping-pong: a forked child that answers each message
// with the same bytes (pinned to `cpu` unless it is -1). Its pid, or -1.
static pid_t start_peer(int ping[2], int pong[2], char *buffer, size_t bytes, int cpu) {
    pid_t pid = fork();
    if (pid != 0) {
        if (pid > 0) {
            close(ping[0]);
            close(pong[1]);
        }
        return pid;
    }
    // The child only pins itself, reads, writes and exits: safe after fork in a threaded process.
    if (cpu >= 0) pin_to(0, cpu);
    close(ping[1]);
    close(pong[0]);
    while (transfer(ping[0], buffer, bytes, 0) == 0 && transfer(pong[1], buffer, bytes, 1) == 0) {}
    _exit(0);
}

int bench_pipe_pingpong(int rounds, size_t bytes, double *samples) {
    int ping[2], pong[2];
    if (pipe(ping) != 0) return errno;
    if (pipe(pong) != 0) return errno;
    char *buffer = calloc(1, bytes);
    pid_t pid = start_peer(ping, pong, buffer, bytes, -1);
    if (pid < 0) return errno;
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
#include <sys/resource.h>

static int pin_to(pid_t pid, int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(pid, sizeof one, &one);
}

int bench_pipe_pingpong_cpu(int rounds, size_t bytes, int caller_cpu, int peer_cpu, double *cpu_ns) {
    int ping[2], pong[2];
    if (pipe(ping) != 0) return errno;
    if (pipe(pong) != 0) return errno;
    char *buffer = calloc(1, bytes);
    cpu_set_t saved;
    sched_getaffinity(0, sizeof saved, &saved);
    if (caller_cpu >= 0 && pin_to(0, caller_cpu) != 0) return errno;
    pid_t pid = start_peer(ping, pong, buffer, bytes, peer_cpu);
    if (pid < 0) return errno;
    // One round first: the child has pinned itself and is waiting.
    transfer(ping[1], buffer, bytes, 1);
    transfer(pong[0], buffer, bytes, 0);
    struct timespec start, end;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    int done = 0;
    for (; done < rounds; done++) {
        if (transfer(ping[1], buffer, bytes, 1) != 0 || transfer(pong[0], buffer, bytes, 0) != 0) break;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    close(ping[1]);
    close(pong[0]);
    struct rusage usage;
    wait4(pid, NULL, 0, &usage);
    sched_setaffinity(0, sizeof saved, &saved);
    free(buffer);
    double caller = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
    double peer = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3;
    *cpu_ns = done > 0 ? (caller + peer) / done : 0;
    return 0;
}

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

int bench_allowed_cpus(int *cpus, int max) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < max; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) cpus[count++] = cpu;
    }
    return count;
}

int bench_pin_thread_to(int cpu) {
    if (!bench_pinned && sched_getaffinity(0, sizeof bench_saved_affinity, &bench_saved_affinity) != 0) return -1;
    if (pin_to(0, cpu) != 0) return -1;
    bench_pinned = 1;
    return 0;
}

int bench_pin_task(int tid, int cpu) {
    return pin_to((pid_t)tid, cpu);
}

void bench_unpin(void) {
    if (bench_pinned) sched_setaffinity(0, sizeof bench_saved_affinity, &bench_saved_affinity);
    bench_pinned = 0;
}

// A shared-memory transport's floor: two one-message mailboxes in memory
// both processes map, each a sequence word (a futex) and the bytes. The
// sender copies the message in and bumps the sequence (waking the receiver
// if it sleeps); the receiver spins up to `spin_ns` for it, then sleeps on
// the futex, and copies the message out (as a host must before it looks at
// a hostile child's bytes).
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct bench_mailbox {
    _Atomic uint32_t sequence;
    _Atomic uint32_t sleeping;
    char bytes[];
};

static uint64_t bench_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void mailbox_send(struct bench_mailbox *box, const char *message, size_t bytes, uint32_t sequence) {
    memcpy(box->bytes, message, bytes);
    atomic_store(&box->sequence, sequence);
    // Only the receiver clears `sleeping` (a store here could wipe out its
    // flag for the next round, and lose that wake-up): a flag left set
    // costs one spare wake, never a lost one.
    if (atomic_load(&box->sleeping)) syscall(SYS_futex, &box->sequence, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void mailbox_receive(struct bench_mailbox *box, char *message, size_t bytes, uint32_t sequence, uint64_t spin_ns) {
    uint64_t until = spin_ns ? bench_now_ns() + spin_ns : 0;
    while (atomic_load(&box->sequence) != sequence) {
        if (spin_ns && bench_now_ns() < until) continue;
        atomic_store(&box->sleeping, 1);
        uint32_t seen = atomic_load(&box->sequence);
        if (seen == sequence) break;
        // Bounded: a peer that died must not hang the bench.
        struct timespec second = {1, 0};
        syscall(SYS_futex, &box->sequence, FUTEX_WAIT, seen, &second, NULL, 0);
    }
    atomic_store(&box->sleeping, 0);
    memcpy(message, box->bytes, bytes);
}

int bench_shm_pingpong(int rounds, size_t bytes, uint64_t spin_ns, double *samples) {
    size_t size = 2 * (sizeof(struct bench_mailbox) + bytes + 64);
    char *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return errno;
    struct bench_mailbox *ping = (struct bench_mailbox *)region;
    struct bench_mailbox *pong = (struct bench_mailbox *)(region + ((sizeof(struct bench_mailbox) + bytes + 63) & ~(size_t)63));
    char *message = calloc(1, bytes ? bytes : 1);
    pid_t pid = fork();
    if (pid < 0) {
        int failure = errno;
        free(message);
        munmap(region, size);
        return failure;
    }
    if (pid == 0) {
        for (uint32_t round = 1; round <= (uint32_t)rounds; round++) {
            mailbox_receive(ping, message, bytes, round, spin_ns);
            mailbox_send(pong, message, bytes, round);
        }
        _exit(0);
    }
    for (int round = 1; round <= rounds; round++) {
        uint64_t start = bench_now_ns();
        mailbox_send(ping, message, bytes, (uint32_t)round);
        mailbox_receive(pong, message, bytes, (uint32_t)round, spin_ns);
        samples[round - 1] = (double)(bench_now_ns() - start);
    }
    waitpid(pid, NULL, 0);
    free(message);
    munmap(region, size);
    return 0;
}
