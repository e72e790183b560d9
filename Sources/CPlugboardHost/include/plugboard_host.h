// C helpers the host needs from glibc that Swift's Glibc module hides
// (they need _GNU_SOURCE), and the parts that must run before Swift's main
// or inside a signal handler.
#ifndef PLUGBOARD_HOST_H
#define PLUGBOARD_HOST_H

#include <stdint.h>
#include <sys/types.h>

/// The file of the loaded image containing `address` (dladdr), or NULL.
/// The string belongs to the dynamic linker; copy it.
const char *_Nullable plugboard_image_path(const void *_Nullable address);

// MARK: - Scanner process

/// The environment variable that makes a host executable its own scanner,
/// and the protocol version it carries.
#define PLUGBOARD_SCANNER_VARIABLE "PLUGBOARD_SCANNER"
#define PLUGBOARD_SCANNER_PROTOCOL "1"
/// The scanner child's channel to the host (a socket).
#define PLUGBOARD_SCANNER_CHANNEL_FD 3

/// Starts `path` as a scanner child in its own process group, with default
/// signal dispositions and an empty signal mask: fd 0 is /dev/null, fd 1 and
/// 2 write to `*errors` (a pipe), fd 3 is the other end of `*channel` (a
/// socket). Returns 0 and sets `*pid`, or an errno value.
int plugboard_spawn_scanner(const char *_Nonnull path, char *_Nullable const *_Nonnull argv,
                            char *_Nullable const *_Nonnull envp, int *_Nonnull channel,
                            int *_Nonnull errors, pid_t *_Nonnull pid);

/// Whether this process runs under a sanitizer that reserves huge address
/// ranges (an address-space limit would break it).
int plugboard_under_sanitizer(void);

/// Whether `path`'s POSIX access control list lets a named user or group
/// write (its mask included); 1 also when the list cannot be read whole.
int plugboard_acl_grants_named_write(const char *_Nonnull path);

// MARK: - Crash journal

/// The journal's note file and when the oldest plugin call still running
/// started (CLOCK_MONOTONIC nanoseconds, 0 when none). Read by the signal
/// handler; written by the host.
void plugboard_journal_set_note(int fd);
/// `hang_applies` is 0 for a call (a command may run long on purpose: a
/// SIGINT/SIGTERM then always clears its note), 1 for init and activate.
void plugboard_journal_call_started(int64_t monotonic_ns, int hang_applies);
void plugboard_journal_call_ended(void);
/// Handle SIGINT and SIGTERM where they still have their default action:
/// a call running for less than `threshold_ns` is not the plugin's fault, so
/// its note is cleared; a longer one (a hang) keeps its note and gets a line
/// "interrupted SIGNO ELAPSED_MS" appended. Then the signal is raised again
/// with its default action, so the process ends as it would have.
void plugboard_journal_install_signal_handlers(int64_t threshold_ns);
int64_t plugboard_monotonic_ns(void);

#endif
