// The crash journal's signal handler: async-signal-safe calls only.
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "plugboard_host.h"

static _Atomic int note_fd = -1;
static _Atomic int64_t call_started = 0;
static _Atomic int hang_applies = 1;
static int64_t hang_threshold = 0;

void plugboard_journal_set_note(int fd) { atomic_store(&note_fd, fd); }
void plugboard_journal_call_started(int64_t ns, int applies) {
    int64_t expected = 0;
    // Keep the oldest running call's start.
    if (atomic_compare_exchange_strong(&call_started, &expected, ns)) atomic_store(&hang_applies, applies);
}
void plugboard_journal_call_ended(void) { atomic_store(&call_started, 0); }

int64_t plugboard_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static size_t format_decimal(char *out, int64_t value) {
    char digits[24];
    size_t count = 0;
    if (value < 0) value = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0);
    for (size_t i = 0; i < count; i++) out[i] = digits[count - 1 - i];
    return count;
}

static void on_termination(int signo) {
    int fd = atomic_load(&note_fd);
    int64_t started = atomic_load(&call_started);
    if (fd >= 0 && started != 0) {
        int64_t elapsed = plugboard_monotonic_ns() - started;
        if (!atomic_load(&hang_applies) || elapsed < hang_threshold) {
            ftruncate(fd, 0);
        } else {
            char line[80] = "\ninterrupted ";
            size_t length = strlen(line);
            length += format_decimal(line + length, signo);
            line[length++] = ' ';
            length += format_decimal(line + length, elapsed / 1000000);
            line[length++] = '\n';
            off_t end = lseek(fd, 0, SEEK_END);
            if (end >= 0) pwrite(fd, line, length, end);
        }
    }
    signal(signo, SIG_DFL);
    raise(signo);
}

void plugboard_journal_install_signal_handlers(int64_t threshold_ns) {
    hang_threshold = threshold_ns;
    int signals[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction current;
        if (sigaction(signals[i], NULL, &current) != 0) continue;
        // A host with its own handler (or ignoring the signal) stops cleanly
        // itself and clears its notes through PluginHost.shutdown().
        if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_termination;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        sigaction(signals[i], &action, NULL);
    }
}
