/* Baseline for `make bench`: the least a loader can do. Usage:
 *   dlopen-baseline [--call] FILE...
 * Linked against libPlugboard.so like a host (the Makefile does that), so the
 * SDK and the Swift runtime are loaded at startup, untimed, as in a host.
 * Opens each FILE with dlopen(RTLD_NOW | RTLD_LOCAL), looks up
 * plugboard_entry, and with --call calls it (the plugin's own code runs: it
 * builds its descriptor), nothing else, and prints the elapsed nanoseconds. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    struct timespec start, end;
    int call = argc > 1 && strcmp(argv[1], "--call") == 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 1 + call; i < argc; i++) {
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
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%lld\n", (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
    return 0;
}
