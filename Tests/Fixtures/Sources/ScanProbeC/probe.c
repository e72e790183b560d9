#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "scan_probe.h"

extern char **environ;

// What a plugin's constructor can see and do in the process that loads it,
// written to "scan-probe" beside the loaded image (the host's images
// directory, which a test sets): the environment variables' names, the open
// file descriptors' targets, the resource limits, and the pid of a child it
// forks and leaves running (which must not outlive the scan).
__attribute__((constructor)) void plugboard_fixture_scan_probe(void) {
    static int done = 0;
    if (done++) return;
    Dl_info info;
    if (dladdr((void *)plugboard_fixture_scan_probe, &info) == 0 || info.dli_fname == NULL) return;
    char image[4096];
    snprintf(image, sizeof image, "%s", info.dli_fname);
    char path[4200];
    snprintf(path, sizeof path, "%s/scan-probe", dirname(image));
    FILE *out = fopen(path, "we");
    if (out == NULL) return;
    for (char **entry = environ; *entry != NULL; entry++) {
        const char *equals = strchr(*entry, '=');
        fprintf(out, "env %.*s\n", (int)(equals ? equals - *entry : (long)strlen(*entry)), *entry);
    }
    DIR *fds = opendir("/proc/self/fd");
    if (fds != NULL) {
        struct dirent *entry;
        while ((entry = readdir(fds)) != NULL) {
            if (entry->d_name[0] == '.') continue;
            char link[64], target[4096];
            snprintf(link, sizeof link, "/proc/self/fd/%s", entry->d_name);
            ssize_t length = readlink(link, target, sizeof target - 1);
            if (length < 0) continue;
            target[length] = 0;
            fprintf(out, "fd %s %s\n", entry->d_name, target);
        }
        closedir(fds);
    }
    struct { const char *name; int resource; } limits[] = {{"core", RLIMIT_CORE}, {"as", RLIMIT_AS}, {"cpu", RLIMIT_CPU}};
    for (size_t index = 0; index < 3; index++) {
        struct rlimit limit;
        getrlimit(limits[index].resource, &limit);
        if (limit.rlim_cur == RLIM_INFINITY) fprintf(out, "limit %s unlimited\n", limits[index].name);
        else fprintf(out, "limit %s %llu\n", limits[index].name, (unsigned long long)limit.rlim_cur);
    }
    fflush(out);
    pid_t child = fork();
    if (child == 0) {
        // Keeps every inherited descriptor, as a careless plugin would.
        for (;;) pause();
    }
    fprintf(out, "forked %d\n", (int)child);
    fclose(out);
}
