// spawn-measured: runs a program and reports its own time and peak memory.
//
//   spawn-measured REPORT PROGRAM [ARGS...]
//
// Writes "<nanoseconds> <ru_maxrss KiB> <wait status>\n" to REPORT, timed
// from just before posix_spawn to the end of wait4. Why it exists: on Linux a
// spawned child's ru_maxrss starts at its parent's resident size (exec
// records the old address space's high-water mark), so a benchmark process
// of 40 MiB saw every child, even a C program, at 40 MiB or more. Spawned
// from this small process, a child's figure is its own (and its waited-for
// children's, the scanners). Standard input, output and error are inherited.
// Exit status: 0 when the report is written (whatever the program did),
// 127 when the program cannot be started or the report cannot be written,
// 64 when called without a report and a program. The peak includes this
// program's own floor (about 1 MiB, shared until the child's exec).
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <sys/wait.h>
#include <sys/resource.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn-measured REPORT PROGRAM [ARGS...]\n");
        return 64;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid;
    int error = posix_spawn(&pid, argv[2], NULL, NULL, &argv[2], environ);
    if (error != 0) {
        fprintf(stderr, "spawn-measured: cannot start %s: %s\n", argv[2], strerror(error));
        return 127;
    }
    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "spawn-measured: wait4: %s\n", strerror(errno));
            return 127;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    long long nanoseconds = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
    FILE *report = fopen(argv[1], "w");
    if (report == NULL || fprintf(report, "%lld %ld %d\n", nanoseconds, usage.ru_maxrss, status) < 0 || fclose(report) != 0) {
        fprintf(stderr, "spawn-measured: cannot write %s\n", argv[1]);
        return 127;
    }
    return 0;
}
