// The attacks Swift's Glibc module does not reach (variadic or GNU-only calls).
#include <sys/types.h>
/// unshare(CLONE_NEWUSER): 0 or -1 with errno.
int attack_unshare(void);
/// PTRACE_ATTACH to `pid`, waited for and detached: 0 or -1 with errno.
int attack_ptrace(pid_t pid);
