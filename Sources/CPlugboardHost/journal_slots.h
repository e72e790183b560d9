// The journal's slot table, shared by the interrupt side (journal.c) and the
// fault side (fault.c); not part of the module's interface.
#ifndef PLUGBOARD_JOURNAL_SLOTS_H
#define PLUGBOARD_JOURNAL_SLOTS_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct journal_slot {
    // FREE, CHANGING (being registered, changed or unregistered) or LIVE.
    // Zero is FREE, so the static table needs no initialiser: readers use a
    // slot only while it is LIVE.
    _Atomic int state;
    // Readers inside the slot now (the signal handlers): changes wait for
    // none before the caller may close the fd, so a handler never writes to
    // a number that was closed and reused meanwhile.
    _Atomic int readers;
    // Bumped at each registration: an image registered with an older host
    // in this slot is not blamed in a newer host's journal.
    _Atomic uint64_t generation;
    _Atomic int fd;
    // The note file's identity: a handler writes to `fd` only while it
    // still is that file (a plugin may have closed it and reopened the
    // number on a file of its own).
    _Atomic uint64_t note_dev, note_ino;
    // The fault file, opened by name when a fault is noted and checked
    // against its identity. Written only while the slot is CHANGING.
    char fault_path[PATH_MAX];
    _Atomic uint64_t fault_dev, fault_ino;
    // Set once a fault was noted: the notes then stay as the crash left them.
    _Atomic int faulted;
    _Atomic int64_t hang_threshold;
    // When the oldest running call started (CLOCK_MONOTONIC ns), 0 when none.
    _Atomic int64_t call_started;
    _Atomic int hang_applies;
};

/// The LIVE slot `slot`, counted as read until journal_slot_leave, or NULL
/// (not LIVE, out of range, or `generation` is not 0 and not the slot's).
struct journal_slot *journal_slot_enter(int slot, uint64_t generation);
void journal_slot_leave(struct journal_slot *entry);
/// For a journal registered while the process is dying of a fault the
/// handler already attributed: notes it as the handler would have.
void fault_note_late_journal(struct journal_slot *entry);
/// Writes `value` (negative: 0) in decimal at `out` (room for 20 digits),
/// without a terminator; returns the count. Async-signal-safe.
size_t plugboard_format_decimal(char *out, int64_t value);
/// The generation of LIVE slot `slot`, or 0.
uint64_t journal_slot_generation(int slot);

#endif
