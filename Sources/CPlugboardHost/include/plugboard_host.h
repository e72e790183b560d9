// C helpers the host needs from glibc that Swift's Glibc module hides
// (they need _GNU_SOURCE), and the parts that must run before Swift's main
// or inside a signal handler.
#ifndef PLUGBOARD_HOST_H
#define PLUGBOARD_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <spawn.h>
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

// MARK: - Sandbox

/// The environment variable carrying a child's sandbox policy (one
/// `key=value` per line: read, write, tcp-connect, tcp-bind, network, off,
/// file-size, cpu-seconds, address-space, descriptors). Removed once read.
#define PLUGBOARD_SANDBOX_VARIABLE "PLUGBOARD_SANDBOX"
/// O_PATH (Swift's Glibc module is not built with _GNU_SOURCE).
extern const int plugboard_open_path;
/// How a child's stderr line names a system call its sandbox refused.
#define PLUGBOARD_DENIAL_PREFIX "plugboard sandbox: refused system call "

/// Applies the policy in PLUGBOARD_SANDBOX, if any, to this process: called
/// from the pre-main constructor while the process has one thread. A refused
/// call's name goes to `denial_fd` once, as a line starting with
/// PLUGBOARD_DENIAL_PREFIX. Returns 0 when there was no policy or it was
/// applied (see the report for which layers were reached), -1 when none was.
int plugboard_sandbox_apply(int denial_fd);

/// What the sandbox reached, one line each: `requested`, `landlock-abi N`,
/// `reached LAYER`, `missing LAYER REASON`. NULL when no sandbox was asked for.
const char *_Nullable plugboard_sandbox_report(void);

// MARK: - Resources

/// The variable naming the cgroup v1 leaves (folders, `:`-separated) a
/// child joins itself before anything else (cgroup_join.c). Removed once read.
#define PLUGBOARD_CGROUP_VARIABLE "PLUGBOARD_CGROUP"
/// Joins the leaves PLUGBOARD_CGROUP names: from a pre-main constructor.
void plugboard_cgroup_join_self(void);
/// The leaves it could not join, with why; NULL when it joined all (or none was named).
const char *_Nullable plugboard_cgroup_join_failures(void);

// MARK: - Isolated plugin process

/// The variable that starts `plugboard-child` as an isolated plugin's child
/// (CPlugboardChild/child.c), and its value: the protocol it speaks.
#define PLUGBOARD_CHILD_VARIABLE "PLUGBOARD_CHILD"
#define PLUGBOARD_ISOLATED_PROTOCOL "isolated-1"
/// The child's end of the request pipe; replies go to the next fd.
#define PLUGBOARD_ISOLATED_REQUESTS_FD 3
/// The child's log pipe (the logging service's records).
#define PLUGBOARD_ISOLATED_LOG_FD 5
/// The host's answers to a sandboxed child's storage writes (which the host
/// makes: the child's storage folder is read-only to it).
#define PLUGBOARD_ISOLATED_STORAGE_FD 6

/// The child's shared-memory rings: fd 7 carries the host's large
/// frames to the child, fd 8 the child's to the host (``SharedRing``).
#define PLUGBOARD_ISOLATED_RINGS_FD 7
/// A ring's first page holds its reader's release mark; its frames follow.
#define PLUGBOARD_RING_HEADER 4096
#define PLUGBOARD_RING_DATA (16 << 20)

/// Starts `path` as an isolated plugin's child in its own process group,
/// with default signal dispositions and an empty signal mask: fd 0 is
/// /dev/null, fds 1 and 2 write to `*output`, fd 3 reads `*requests`, fd 4
/// writes `*replies`, fd 5 writes `*log`, fd 6 reads `*storage` (all
/// pipes; the host's ends are close-on-exec), fds 7 and 8 are `rings`
/// (skipped when -1: a kernel without memfd). Returns 0 and sets `*pid`, or
/// an errno value.
int plugboard_spawn_isolated(const char *_Nonnull path, char *_Nullable const *_Nonnull argv,
                             char *_Nullable const *_Nonnull envp, int *_Nonnull requests, int *_Nonnull replies,
                             int *_Nonnull output, int *_Nonnull log, int *_Nonnull storage, const int rings[_Nonnull 2],
                             pid_t *_Nonnull pid);

/// A ring's memory: a close-on-exec memfd of PLUGBOARD_RING_HEADER +
/// PLUGBOARD_RING_DATA bytes, sealed at that size (a peer that shrank it
/// would make the other side's next read a SIGBUS); -1 when it cannot be made.
int plugboard_ring_create(void);

/// Maps the ring `fd` shared, read and write, after checking its size and
/// seals (a descriptor that is not such a ring is refused); NULL if not.
void *_Nullable plugboard_ring_map(int fd);

/// Unmaps a ring plugboard_ring_map mapped.
void plugboard_ring_unmap(void *_Nonnull ring);

/// The reader's release mark (acquire), and setting it (release): where
/// the next unread frame may start; the writer may reuse what lies before.
uint64_t plugboard_ring_released(const void *_Nonnull ring);
void plugboard_ring_release(void *_Nonnull ring, uint64_t position);

/// pipe2 with O_CLOEXEC (and O_NONBLOCK on both ends when `nonblocking`):
/// 0, or an errno value.
int plugboard_pipe(int fds[_Nonnull 2], int nonblocking);

/// write(2) with SIGPIPE blocked on the calling thread: a pipe whose reader
/// is gone gives -1 and EPIPE instead of the signal (whose default action
/// would end the host). A SIGPIPE the write raised is consumed.
ssize_t plugboard_write_no_sigpipe(int fd, const void *_Nonnull bytes, size_t count);
// In a process of Plugboard's own (an isolated child): SIGPIPE ignored for
// good, so plugboard_write_no_sigpipe is a plain write(2) there (three
// system calls fewer per frame).
void plugboard_ignore_sigpipe(void);

/// Bytes a pipe can take now (its capacity minus what is unread), or -1.
long plugboard_pipe_room(int fd);

/// Sleeps until child `pid` has ended (not reaped: `waitpid` still returns
/// it) or `timeout_ms` passed, on a pidfd: no polling. 1 ended, 0 the
/// timeout came first, -1 this kernel has no pidfd (before 5.3) or `pid`
/// is not a child that can be waited for.
int plugboard_wait_child_end(int pid, int timeout_ms);

/// Whether this process runs under a sanitizer that reserves huge address
/// ranges (an address-space limit would break it).
int plugboard_under_sanitizer(void);

/// pipe2(fds, O_CLOEXEC), which Swift's Glibc module does not offer: both
/// ends closed on exec from the start, so no child started meanwhile by
/// another thread inherits them. 0, or -1 and errno.
int plugboard_pipe_cloexec(int fds[_Nonnull 2]);

/// posix_spawn as every child Plugboard starts gets it (the scanner's and
/// isolated children above, the dev tools' builds): fd 0 is /dev/null,
/// descriptors from `first_closed` up are closed, after `actions` (the
/// caller's, made with posix_spawn_file_actions_init, destroyed here); an
/// empty signal mask, default signal dispositions, its own process group.
/// Returns 0 and sets `*pid`, or an errno value.
int plugboard_spawn_child(const char *_Nonnull path, char *_Nullable const *_Nonnull argv,
                          char *_Nullable const *_Nonnull envp, posix_spawn_file_actions_t *_Nonnull actions,
                          int first_closed, pid_t *_Nonnull pid);

/// Serves the main dispatch queue (and with it the main actor) on the
/// calling thread, forever: what a run loop does for it, without
/// Foundation. For a process whose main thread cannot call dispatchMain()
/// (it calls pthread_exit, which crashes inside a C constructor). In a
/// program that links Foundation, it runs Foundation's main run loop
/// instead, which serves the queue as well as timers.
_Noreturn void plugboard_serve_main_queue(void);
/// From an isolated child's start, before the plugin loads: the main thread
/// (in plugboard_serve_main_queue) loads Foundation first when `foundation`
/// is set. Returns whether Foundation is loaded.
int plugboard_prepare_main_thread(int foundation);

/// Whether `path`'s POSIX access control list lets a named user or group
/// write (its mask included); 1 also when the list cannot be read whole.
int plugboard_acl_grants_named_write(const char *_Nonnull path);

// MARK: - Crash journal
//
// Each open journal (one per host, its note file) has a slot in a fixed
// table that the SIGINT/SIGTERM handler walks, so several hosts in one
// process each keep a working journal. Nothing here installs a handler
// unless plugboard_journal_install_signal_handlers is called.

/// How many journals can be registered at once.
#define PLUGBOARD_JOURNAL_SLOTS 32

/// Registers a note file `fd`, with its fault file at `fault_path` (see
/// plugboard_fault_register_image), whose hangs count from
/// `hang_threshold_ns` (this host's threshold). Returns its slot, or -1 when
/// the table is full or a file cannot be examined (the note still protects
/// against crashes; signals then pass it by).
int plugboard_journal_register(int fd, const char *_Nonnull fault_path, int64_t hang_threshold_ns);
/// Points `slot` at new files (the old note's descriptor was taken over by
/// plugin code). Returns 0, or -1 (the slot then writes no note).
int plugboard_journal_replace_files(int slot, int fd, const char *_Nonnull fault_path);
/// Whether a fatal signal was noted in `slot`'s fault file: the process is
/// crashing and its notes must stay as they are.
int plugboard_journal_faulted(int slot);
/// Frees `slot` (ignored when -1). Returns once no handler is using the
/// slot's fd any more: only then may the caller close the fd.
void plugboard_journal_unregister(int slot);
/// The slot's first running call started at `monotonic_ns` (CLOCK_MONOTONIC
/// nanoseconds): the oldest running call is the one timed. `hang_applies` is
/// 0 for a `call` (a command may run long on purpose: an interruption then
/// always clears its note), 1 for init and activate (an interruption is
/// noted). Ignored for slot -1.
void plugboard_journal_call_started(int slot, int64_t monotonic_ns, int hang_applies);
/// The slot's last running call returned. Ignored for slot -1.
void plugboard_journal_call_ended(int slot);
/// What an interruption by `signo` does to every registered note: a `call`
/// (a command may run long on purpose) is not the plugin's fault, so its
/// note is cleared; an init or activate keeps its note and gets a line
/// "interrupted SIGNO ELAPSED_MS PAST_THRESHOLD(0/1)" appended. Writes only
/// into a descriptor that is still the note file. Async-signal-safe;
/// callable from a host's own signal handler as well as from normal code.
/// Raises nothing.
void plugboard_journal_interrupted(int signo);
/// The same for one note, from the journal's own record of its running call
/// (fd -1 or `call_started_ns` 0: nothing to do).
void plugboard_journal_note_interrupted(int fd, int64_t call_started_ns, int hang_applies, int64_t hang_threshold_ns,
                                        int signo);
/// Installs a SIGINT and SIGTERM handler where their action is still the
/// default (never over a host's own handler, nor over SIG_IGN): it calls
/// plugboard_journal_interrupted, restores the default action and raises the
/// signal again, so the process ends as it would have. Returns how many it
/// installed (0 on a second call). Never called implicitly.
int plugboard_journal_install_signal_handlers(void);
int64_t plugboard_monotonic_ns(void);

// MARK: - Crash attribution (fault.c)

/// How many plugin images can be registered for attribution.
#define PLUGBOARD_FAULT_IMAGES 4096

/// Records the executable range of the image `handle` (a dlopen handle) as
/// plugin code whose faults go to journal `slot`'s fault file as
/// "fault SIGNO UNIX_SECONDS " followed by `line` (`length` bytes, copied).
/// The first registration installs the handlers for SIGSEGV, SIGBUS, SIGILL,
/// SIGTRAP, SIGFPE and SIGABRT (not under a sanitizer): each finds the
/// innermost frame in a registered image (the faulting instruction, then the
/// frame-pointer chain), notes it, then passes the signal to the handler
/// that was there before (or the default action). Returns 0, or -1.
int plugboard_fault_register_image(void *_Nonnull handle, int slot, const char *_Nonnull line, size_t length);
/// When a fatal signal is being handled on another thread, waits up to
/// `seconds` for it to end the process (so a host does not exit 0 while it
/// crashes); returns at once otherwise.
void plugboard_fault_await_end(unsigned seconds);

// MARK: - Ed25519 and BLAKE2b-512 (OpenSSL libcrypto, in ed25519.c)

/// The 32-byte public key of a 32-byte Ed25519 seed (secret key); 0 on success.
int plugboard_ed25519_public_key(const uint8_t *_Nonnull seed, uint8_t *_Nonnull public_key);
/// Signs `count` bytes with a 32-byte seed into 64 bytes; 0 on success.
int plugboard_ed25519_sign(const uint8_t *_Nonnull seed, const void *_Nullable message, size_t count, uint8_t *_Nonnull signature);
/// 1 when the 64-byte signature of `count` bytes is valid for the 32-byte public key, else 0.
int plugboard_ed25519_verify(const uint8_t *_Nonnull public_key, const void *_Nullable message, size_t count, const uint8_t *_Nonnull signature);
/// BLAKE2b with a 64-byte digest (minisign's prehash); 0 on success.
int plugboard_blake2b512(const void *_Nullable message, size_t count, uint8_t *_Nonnull digest);

// MARK: - SHA-256 (OpenSSL libcrypto, in sha256.c)

/// A new SHA-256 computation, or NULL when libcrypto cannot make one.
void *_Nullable plugboard_sha256_begin(void);
/// Adds `count` bytes; 0, or -1 on failure.
int plugboard_sha256_update(void *_Nonnull context, const void *_Nullable bytes, size_t count);
/// Writes the 32-byte digest and frees `context`; 0, or -1 on failure.
int plugboard_sha256_end(void *_Nonnull context, uint8_t *_Nonnull digest);
/// Frees `context` without a digest.
void plugboard_sha256_discard(void *_Nonnull context);

#endif
