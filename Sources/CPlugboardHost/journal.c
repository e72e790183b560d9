// The crash journal's signal side: a fixed table with one slot per open
// journal (a host's note file), which the SIGINT/SIGTERM handler walks.
// Everything the handler touches is an atomic (lock-free on the 64-bit
// targets Swift supports) and every call it makes is async-signal-safe.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "plugboard_host.h"
#include "journal_slots.h"

enum { SLOT_FREE = 0, SLOT_CHANGING = 1, SLOT_LIVE = 2 };

static struct journal_slot slots[PLUGBOARD_JOURNAL_SLOTS];
static _Atomic uint64_t generations;

static struct journal_slot *slot_at(int slot) {
    return slot >= 0 && slot < PLUGBOARD_JOURNAL_SLOTS ? &slots[slot] : NULL;
}

struct journal_slot *journal_slot_enter(int slot, uint64_t generation) {
    struct journal_slot *entry = slot_at(slot);
    if (entry == NULL) return NULL;
    atomic_fetch_add(&entry->readers, 1);
    if (atomic_load(&entry->state) == SLOT_LIVE && (generation == 0 || atomic_load(&entry->generation) == generation)) {
        return entry;
    }
    atomic_fetch_sub(&entry->readers, 1);
    return NULL;
}

void journal_slot_leave(struct journal_slot *entry) {
    atomic_fetch_sub(&entry->readers, 1);
}

uint64_t journal_slot_generation(int slot) {
    struct journal_slot *entry = journal_slot_enter(slot, 0);
    if (entry == NULL) return 0;
    uint64_t generation = atomic_load(&entry->generation);
    journal_slot_leave(entry);
    return generation;
}

// Hides a slot from new readers, then waits for the ones inside (a
// handler's few writes). Sequentially consistent on both sides: a reader
// either counted itself before this load, or sees the slot not LIVE.
static void hide(struct journal_slot *entry) {
    atomic_store(&entry->state, SLOT_CHANGING);
    while (atomic_load(&entry->readers) != 0) sched_yield();
}

// Sets a hidden slot's files and their identities; 0, or -1 when either
// file cannot be examined.
static int set_files(struct journal_slot *entry, int fd, const char *fault_path) {
    struct stat note, fault;
    if (fd < 0 || fault_path == NULL || strlen(fault_path) >= sizeof entry->fault_path || fstat(fd, &note) != 0
        || stat(fault_path, &fault) != 0) {
        return -1;
    }
    atomic_store(&entry->fd, fd);
    atomic_store(&entry->note_dev, (uint64_t)note.st_dev);
    atomic_store(&entry->note_ino, (uint64_t)note.st_ino);
    strcpy(entry->fault_path, fault_path);
    atomic_store(&entry->fault_dev, (uint64_t)fault.st_dev);
    atomic_store(&entry->fault_ino, (uint64_t)fault.st_ino);
    return 0;
}

int plugboard_journal_register(int fd, const char *fault_path, int64_t hang_threshold_ns) {
    for (int i = 0; i < PLUGBOARD_JOURNAL_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_CHANGING)) continue;
        if (set_files(&slots[i], fd, fault_path) != 0) {
            atomic_store(&slots[i].state, SLOT_FREE);
            return -1;
        }
        atomic_store(&slots[i].generation, atomic_fetch_add(&generations, 1) + 1);
        atomic_store(&slots[i].hang_threshold, hang_threshold_ns);
        atomic_store(&slots[i].call_started, 0);
        atomic_store(&slots[i].hang_applies, 0);
        atomic_store(&slots[i].faulted, 0);
        // Last: readers see the slot only once every field is set.
        atomic_store(&slots[i].state, SLOT_LIVE);
        // A host starting while the process dies of another host's fault:
        // its calls are innocent, whether or not the handler saw this slot.
        fault_note_late_journal(&slots[i]);
        return i;
    }
    return -1;
}

int plugboard_journal_replace_files(int slot, int fd, const char *fault_path) {
    struct journal_slot *entry = slot_at(slot);
    if (entry == NULL || atomic_load(&entry->state) != SLOT_LIVE) return -1;
    hide(entry);
    int result = set_files(entry, fd, fault_path);
    if (result != 0) atomic_store(&entry->fd, -1);
    atomic_store(&entry->state, SLOT_LIVE);
    return result;
}

int plugboard_journal_faulted(int slot) {
    struct journal_slot *entry = slot_at(slot);
    return entry != NULL && atomic_load(&entry->faulted);
}

void plugboard_journal_unregister(int slot) {
    struct journal_slot *entry = slot_at(slot);
    if (entry == NULL) return;
    hide(entry);
    atomic_store(&entry->call_started, 0);
    atomic_store(&entry->fd, -1);
    atomic_store(&entry->state, SLOT_FREE);
}

void plugboard_journal_call_started(int slot, int64_t monotonic_ns, int hang_applies) {
    struct journal_slot *entry = slot_at(slot);
    if (entry == NULL) return;
    // The flag before the time: a reader that sees this call's start sees its flag.
    atomic_store(&entry->hang_applies, hang_applies);
    atomic_store(&entry->call_started, monotonic_ns);
}

void plugboard_journal_call_ended(int slot) {
    struct journal_slot *entry = slot_at(slot);
    if (entry != NULL) atomic_store(&entry->call_started, 0);
}

int64_t plugboard_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

size_t plugboard_format_decimal(char *out, int64_t value) {
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

static void note_interrupted(int fd, int64_t started, int hang_applies, int64_t threshold, int signo, int64_t now) {
    if (fd < 0 || started == 0) return;
    if (!hang_applies) {
        // A command may run long on purpose: a person stopping it leaves
        // nothing to blame.
        ftruncate(fd, 0);
        return;
    }
    // Stopped in init or activate: the note stays, marked for the next
    // start, with whether it ran past the threshold (a hang at once) or not
    // (counted: the same plugin's next interrupted start is a hang).
    int64_t elapsed = now - started;
    char line[96] = "\ninterrupted ";
    size_t length = strlen(line);
    length += plugboard_format_decimal(line + length, signo);
    line[length++] = ' ';
    length += plugboard_format_decimal(line + length, elapsed / 1000000);
    line[length++] = ' ';
    line[length++] = elapsed >= threshold ? '1' : '0';
    line[length++] = '\n';
    off_t end = lseek(fd, 0, SEEK_END);
    if (end >= 0) pwrite(fd, line, length, end);
}

void plugboard_journal_note_interrupted(int fd, int64_t call_started_ns, int hang_applies, int64_t hang_threshold_ns, int signo) {
    note_interrupted(fd, call_started_ns, hang_applies, hang_threshold_ns, signo, plugboard_monotonic_ns());
}

void plugboard_journal_interrupted(int signo) {
    int saved_errno = errno;
    int64_t now = plugboard_monotonic_ns();
    for (int i = 0; i < PLUGBOARD_JOURNAL_SLOTS; i++) {
        struct journal_slot *entry = journal_slot_enter(i, 0);
        if (entry == NULL) continue;
        int fd = atomic_load(&entry->fd);
        struct stat info;
        // A crash under way: its notes stay as they are for the next start.
        if (atomic_load(&entry->faulted)) {
            journal_slot_leave(entry);
            continue;
        }
        // Only into the note file itself: never a file a plugin put at its number.
        if (fd >= 0 && fstat(fd, &info) == 0 && (uint64_t)info.st_dev == atomic_load(&entry->note_dev)
            && (uint64_t)info.st_ino == atomic_load(&entry->note_ino)) {
            note_interrupted(fd, atomic_load(&entry->call_started), atomic_load(&entry->hang_applies),
                             atomic_load(&entry->hang_threshold), signo, now);
        }
        journal_slot_leave(entry);
    }
    errno = saved_errno;
}

static void on_interrupt(int signo) {
    plugboard_journal_interrupted(signo);
    // Then end as the default action would have (SA_RESETHAND restored it
    // already; said again for clarity). The signal is blocked while this
    // handler runs, so the raise takes effect as the handler returns.
    signal(signo, SIG_DFL);
    raise(signo);
}

int plugboard_journal_install_signal_handlers(void) {
    static const int signals[] = {SIGINT, SIGTERM};
    int installed = 0;
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction current;
        if (sigaction(signals[i], NULL, &current) != 0) continue;
        // A host with its own handler (or ignoring the signal) is left alone:
        // it calls plugboard_journal_interrupted (PluginHost.interrupted) itself.
        // Ours is not SIG_DFL either, so a second call installs nothing.
        if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_interrupt;
        // The other signal waits too: one handler at a time writes the notes.
        sigemptyset(&action.sa_mask);
        sigaddset(&action.sa_mask, SIGINT);
        sigaddset(&action.sa_mask, SIGTERM);
        action.sa_flags = SA_RESETHAND;
        if (sigaction(signals[i], &action, NULL) == 0) installed++;
    }
    return installed;
}
