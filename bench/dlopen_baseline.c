/* Baseline for `make bench`: the least a loader can do. Usage:
 *   dlopen-baseline FILE...
 * Linked against libPlugboard.so like a host (the Makefile does that), so the
 * SDK and the Swift runtime are loaded at startup, untimed, as in a host.
 * Opens each FILE with dlopen(RTLD_NOW | RTLD_LOCAL), looks up
 * plugboard_entry, nothing else, and prints the elapsed nanoseconds. */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 1; i < argc; i++) {
        void *handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle || !dlsym(handle, "plugboard_entry")) {
            fprintf(stderr, "%s: %s\n", argv[i], dlerror());
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%lld\n", (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
    return 0;
}
