// The attacks Swift's Glibc module does not reach (variadic or GNU-only calls).
#include <sys/types.h>
/// unshare(CLONE_NEWUSER): 0 or -1 with errno.
int attack_unshare(void);
/// PTRACE_ATTACH to `pid`, waited for and detached: 0 or -1 with errno.
int attack_ptrace(pid_t pid);
/// prlimit(pid, RLIMIT_CPU, 1000 s): 0 or -1 with errno.
int attack_prlimit_cpu(pid_t pid);
/// fcntl(F_SETOWN, pid) on a pipe (its SIGIO would go to `pid`; nothing is sent): 0 or -1 with errno.
int attack_setown(pid_t pid);
/// A SysV segment of `mebibytes` MiB (at least 1), attached, marked removed, written and detached: 0 or -1 with errno.
int attack_shared_memory(long mebibytes);
/// A POSIX message queue, opened and removed: 0 or -1 with errno.
int attack_message_queue(void);
/// Up to `count` threads, parked until all are made, then joined: how many were made.
int attack_threads(int count);
/// Makes up to `count` threads and parks them and the caller for good.
int attack_threads_held(int count);
/// Allocates and writes `mebibytes` MiB, 1 MiB at a time, and keeps them: how many it got.
long attack_memory(long mebibytes);
/// Writes a byte to the FIFO `path`.ready, then spins on the CPU until `path` exists: rounds spun.
long attack_spin_until(const char *path);
