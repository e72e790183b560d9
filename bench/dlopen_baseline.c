/* Baseline for `make bench`: the least a loader can do. Usage:
 *   dlopen-baseline [--rss] [--call] [--durable-write DIR] FILE...
 * Linked against libPlugboard.so like a host (the Makefile does that), so the
 * SDK and the Swift runtime are loaded at startup, untimed, as in a host.
 * Opens each FILE with dlopen(RTLD_NOW | RTLD_LOCAL), looks up
 * plugboard_entry, and with --call calls it (the plugin's own code runs: it
 * builds its descriptor), nothing else, and prints the elapsed nanoseconds
 * (of the loading, and of the write below when asked for).
 * With --durable-write (after --call, when both), then writes one small value into DIR the way a
 * plugin's storage does (a new file written and fsync'd, renamed over
 * DIR/value, the folder fsync'd): the I/O a command such as Greeter's
 * `greet` does besides loading, so a floor can include it.
 * With --rss, a second line: `rss KIB`, its resident memory at the end (the
 * floor of an isolated child's). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    struct timespec start, end;
    int first = 1;
    int rss = argc > first && strcmp(argv[first], "--rss") == 0;
    first += rss;
    int call = argc > first && strcmp(argv[first], "--call") == 0;
    first += call;
    const char *durable = NULL;
    if (argc > first + 1 && strcmp(argv[first], "--durable-write") == 0) {
        durable = argv[first + 1];
        first += 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = first; i < argc; i++) {
        void *handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        void *entry = handle ? dlsym(handle, "plugboard_entry") : NULL;
        if (!entry) {
            fprintf(stderr, "%s: %s\n", argv[i], dlerror());
            return 1;
        }
        if (call && !((const void *(*)(void))entry)()) {
            fprintf(stderr, "%s: plugboard_entry returned null\n", argv[i]);
            return 1;
        }
    }
    if (durable) {
        char temporary[4096], value[4096];
        snprintf(temporary, sizeof temporary, "%s/.tmp-%d", durable, (int)getpid());
        snprintf(value, sizeof value, "%s/value", durable);
        int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        int folder = fd >= 0 ? open(durable, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        const char *step = fd < 0 ? "create" : folder < 0 ? "open the folder" : write(fd, "77", 2) != 2 ? "write"
            : fsync(fd) != 0 ? "fsync" : close(fd) != 0 ? "close" : rename(temporary, value) != 0 ? "rename"
            : fsync(folder) != 0 ? "fsync the folder" : close(folder) != 0 ? "close the folder" : NULL;
        if (step) {
            fprintf(stderr, "%s: cannot %s: %s\n", durable, step, strerror(errno));
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%lld\n", (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
    if (rss) {
        char line[256];
        FILE *status = fopen("/proc/self/status", "r");
        while (status && fgets(line, sizeof line, status)) {
            long kib;
            if (sscanf(line, "VmRSS: %ld", &kib) == 1) printf("rss %ld\n", kib);
        }
        if (status) fclose(status);
    }
    return 0;
}
