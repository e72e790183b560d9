// The sandbox's seccomp layer: what Landlock does not see (processes,
// signals, namespaces, kernel interfaces), refused with an errno, or with
// SIGSYS and the call's name for what must never return. See docs/sandbox.md.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "plugboard_host.h"
#include "sandbox_policy.h"

#define note plugboard_sandbox_note
#define landlock_abi_applied plugboard_landlock_abi_applied

// MARK: - seccomp

#if defined(__x86_64__)
#define PB_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PB_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

// Newer than Debian 12's headers; the same number on every architecture.
#define PB_SYS_fchmodat2 452
#define PB_SYS_setxattrat 463
#define PB_SYS_removexattrat 466

// The calls refused whatever their arguments. A denylist, not an
// allowlist: a plugin is arbitrary native code (docs/sandbox.md).
struct denied_call { int number; const char *name; };
static const struct denied_call denied_calls[] = {
    {SYS_ptrace, "ptrace"}, {SYS_process_vm_readv, "process_vm_readv"}, {SYS_process_vm_writev, "process_vm_writev"},
    {SYS_execve, "execve"}, {SYS_execveat, "execveat"}, {SYS_unshare, "unshare"}, {SYS_setns, "setns"},
    {SYS_mount, "mount"}, {SYS_umount2, "umount2"}, {SYS_pivot_root, "pivot_root"}, {SYS_chroot, "chroot"},
    {SYS_mknodat, "mknodat"}, {SYS_bpf, "bpf"}, {SYS_io_uring_setup, "io_uring_setup"},
    {SYS_io_uring_enter, "io_uring_enter"}, {SYS_io_uring_register, "io_uring_register"},
    {SYS_perf_event_open, "perf_event_open"}, {SYS_keyctl, "keyctl"}, {SYS_add_key, "add_key"},
    {SYS_request_key, "request_key"}, {SYS_init_module, "init_module"}, {SYS_finit_module, "finit_module"},
    {SYS_delete_module, "delete_module"}, {SYS_kexec_load, "kexec_load"}, {SYS_setrlimit, "setrlimit"},
    {SYS_userfaultfd, "userfaultfd"}, {SYS_open_by_handle_at, "open_by_handle_at"}, {SYS_tkill, "tkill"},
    {SYS_pidfd_open, "pidfd_open"}, {SYS_pidfd_getfd, "pidfd_getfd"}, {SYS_pidfd_send_signal, "pidfd_send_signal"},
    {SYS_swapon, "swapon"}, {SYS_swapoff, "swapoff"}, {SYS_reboot, "reboot"}, {SYS_acct, "acct"},
    {SYS_quotactl, "quotactl"}, {SYS_fanotify_init, "fanotify_init"}, {SYS_move_mount, "move_mount"},
    {SYS_fsopen, "fsopen"}, {SYS_fsmount, "fsmount"}, {SYS_open_tree, "open_tree"},
    // Metadata Landlock does not see: a root host's child keeps uid 0 and
    // so owns every root file (a set-uid bit on a root program is root for
    // any local user); anyone's child owns the user's files.
    {SYS_fchmod, "fchmod"}, {SYS_fchmodat, "fchmodat"}, {SYS_fchown, "fchown"}, {SYS_fchownat, "fchownat"},
    {SYS_setxattr, "setxattr"}, {SYS_lsetxattr, "lsetxattr"}, {SYS_fsetxattr, "fsetxattr"},
    {SYS_removexattr, "removexattr"}, {SYS_lremovexattr, "lremovexattr"}, {SYS_fremovexattr, "fremovexattr"},
    {SYS_utimensat, "utimensat"}, {PB_SYS_fchmodat2, "fchmodat2"}, {PB_SYS_setxattrat, "setxattrat"},
    {PB_SYS_removexattrat, "removexattrat"},
    // SysV IPC and POSIX message queues: memory no limit of the child
    // bounds (a detached segment is no address space), kept after it exits,
    // and shared with every process of the same IPC namespace, which is
    // optional (docs/sandbox.md, "Resources").
    {SYS_shmget, "shmget"}, {SYS_shmat, "shmat"}, {SYS_shmctl, "shmctl"}, {SYS_shmdt, "shmdt"},
    {SYS_msgget, "msgget"}, {SYS_msgsnd, "msgsnd"}, {SYS_msgrcv, "msgrcv"}, {SYS_msgctl, "msgctl"},
    {SYS_semget, "semget"}, {SYS_semop, "semop"}, {SYS_semtimedop, "semtimedop"}, {SYS_semctl, "semctl"},
    {SYS_mq_open, "mq_open"}, {SYS_mq_unlink, "mq_unlink"}, {SYS_mq_timedsend, "mq_timedsend"},
    {SYS_mq_timedreceive, "mq_timedreceive"}, {SYS_mq_notify, "mq_notify"}, {SYS_mq_getsetattr, "mq_getsetattr"},
    // Joining another process group (its own session holds the host's):
    // kill(0) would then reach that group.
    {SYS_setpgid, "setpgid"}, {SYS_ioprio_set, "ioprio_set"},
#ifdef SYS_fork
    {SYS_fork, "fork"}, {SYS_vfork, "vfork"}, {SYS_mknod, "mknod"}, {SYS_kexec_file_load, "kexec_file_load"},
    {SYS_chmod, "chmod"}, {SYS_chown, "chown"}, {SYS_lchown, "lchown"}, {SYS_utime, "utime"}, {SYS_utimes, "utimes"},
    {SYS_futimesat, "futimesat"},
#endif
};
#define DENIED_COUNT (sizeof denied_calls / sizeof denied_calls[0])

// Calls refused depending on their arguments, named for the report.
static const struct denied_call checked_calls[] = {
    {SYS_clone, "clone (a new process)"}, {SYS_clone3, "clone3"}, {SYS_kill, "kill (another process)"},
    {SYS_tgkill, "tgkill (another process)"}, {SYS_rt_sigqueueinfo, "rt_sigqueueinfo (another process)"},
    {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo (another process)"}, {SYS_prlimit64, "prlimit64 (setting a limit)"},
    {SYS_socket, "socket (a family, type or protocol not granted)"}, {SYS_ioctl, "ioctl (TIOCSTI or a signal owner)"},
    {SYS_fcntl, "fcntl (a signal owner)"}, {SYS_setpriority, "setpriority (another process)"},
    {SYS_sched_setaffinity, "sched_setaffinity (another process)"}, {SYS_sched_setscheduler, "sched_setscheduler (another process)"},
    {SYS_sched_setparam, "sched_setparam (another process)"}, {SYS_sched_setattr, "sched_setattr (another process)"},
    {SYS_truncate, "truncate (no Landlock right for it here)"},
};

static const char *call_name(int number) {
    for (size_t index = 0; index < DENIED_COUNT; index++)
        if (denied_calls[index].number == number) return denied_calls[index].name;
    for (size_t index = 0; index < sizeof checked_calls / sizeof checked_calls[0]; index++)
        if (checked_calls[index].number == number) return checked_calls[index].name;
    return "an unnamed call";
}

static int denial_fd = -1;
static unsigned char denial_told[1024];

// SIGSYS from SECCOMP_RET_TRAP: the call fails with EPERM as if refused
// outright, and the host hears its name once: one line on stderr, in one
// write (atomic on a pipe, so never inside another writer's line; the host
// turns it into `sandbox-denied`). Not on the notice pipe: a notice longer
// than PIPE_BUF takes several writes, which this one could split. A plugin
// that blocks SIGSYS is killed by it at its next refused call instead.
static void denied(int signal, siginfo_t *info, void *context) {
    (void)signal;
    int number = info->si_syscall;
#if defined(__x86_64__)
    ((ucontext_t *)context)->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
    ((ucontext_t *)context)->uc_mcontext.regs[0] = (unsigned long long)-EPERM;
#endif
    if (denial_fd < 0 || number < 0 || number >= (int)sizeof denial_told || denial_told[number]) return;
    denial_told[number] = 1;
    char line[192];
    size_t length = 0;
    for (const char *c = "\n" PLUGBOARD_DENIAL_PREFIX; *c && length < sizeof line - 1; c++) line[length++] = *c;
    for (const char *c = call_name(number); *c && length < sizeof line - 1; c++) line[length++] = *c;
    line[length++] = '\n';
    ssize_t ignored = write(denial_fd, line, length);
    (void)ignored;
}

#define STATEMENT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP(code, k, t, f))
#define ARGUMENT_LOW(n) (offsetof(struct seccomp_data, args) + (n) * 8)
#define ARGUMENT_HIGH(n) (offsetof(struct seccomp_data, args) + (n) * 8 + 4)
#define DENY SECCOMP_RET_TRAP
#define ALLOW SECCOMP_RET_ALLOW

struct program { struct sock_filter code[512]; int length; };

static void emit(struct program *program, struct sock_filter instruction) {
    if (program->length < 512) program->code[program->length++] = instruction;
}

// One call checked against its arguments: the instructions after the
// number matched, ending in ALLOW or DENY; the block is skipped otherwise.
static void checked(struct program *program, int number, const struct sock_filter *block, int count) {
    emit(program, STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
    emit(program, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)number, 0, (uint8_t)count));
    for (int index = 0; index < count; index++) emit(program, block[index]);
}

// A call allowed only when argument `n` is one of the pids given (the
// child's own, or 0: its process group, which it leads), else refused.
static void own_pid_only(struct program *program, int number, int n, pid_t self, int allow_zero) {
    struct sock_filter block[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(n)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 3, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)-self, 2, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, allow_zero ? 0u : (uint32_t)self, 1, 0),
        STATEMENT(BPF_RET | BPF_K, DENY),
        STATEMENT(BPF_RET | BPF_K, ALLOW),
    };
    checked(program, number, block, 6);
}

// A call refused when argument `n` is one of three values, else allowed.
static void refuse_values(struct program *program, int number, int n, uint32_t first, uint32_t second, uint32_t third) {
    struct sock_filter block[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(n)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, first, 2, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, second, 1, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, third, 0, 1),
        STATEMENT(BPF_RET | BPF_K, DENY),
        STATEMENT(BPF_RET | BPF_K, ALLOW),
    };
    checked(program, number, block, 6);
}

int plugboard_sandbox_apply_seccomp(const struct policy *policy) {
#ifndef PB_AUDIT_ARCH
    note("missing seccomp no filter for this architecture\n");
    return -1;
#else
    struct program program = {.length = 0};
    pid_t self = getpid();
    // Another architecture's numbers (x32 included) are refused outright.
    emit(&program, STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit(&program, JUMP(BPF_JMP | BPF_JEQ | BPF_K, PB_AUDIT_ARCH, 1, 0));
    emit(&program, STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    emit(&program, STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
    emit(&program, JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    emit(&program, STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    for (size_t index = 0; index < DENIED_COUNT; index++) {
        emit(&program, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)denied_calls[index].number, 0, 1));
        emit(&program, STATEMENT(BPF_RET | BPF_K, DENY));
    }
    // clone: threads only (no new process, no new namespace). Refused
    // with an errno, not a trap: posix_spawn clones with every signal
    // blocked, and a blocked SIGSYS kills the process.
    struct sock_filter clone_block[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(0)),
        JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 2),
        JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP, 1, 0),
        STATEMENT(BPF_RET | BPF_K, ALLOW),
        STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    checked(&program, SYS_clone, clone_block, 5);
    // clone3's flags sit behind a pointer: ENOSYS, so glibc falls back to clone.
    struct sock_filter clone3_block[] = {STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS)};
    checked(&program, SYS_clone3, clone3_block, 1);
    own_pid_only(&program, SYS_kill, 0, self, 1);
    own_pid_only(&program, SYS_tgkill, 0, self, 0);
    own_pid_only(&program, SYS_rt_sigqueueinfo, 0, self, 0);
    own_pid_only(&program, SYS_rt_tgsigqueueinfo, 0, self, 0);
    // prlimit64: reading any process's limits is fine; setting is not,
    // but for its own CPU limit (a scanner lowers it per file; without
    // CAP_SYS_RESOURCE nobody raises a hard limit).
    struct sock_filter prlimit_block[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(0)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 0, 2),
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(1)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, RLIMIT_CPU, 5, 0),
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(2)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_HIGH(2)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        STATEMENT(BPF_RET | BPF_K, DENY),
        STATEMENT(BPF_RET | BPF_K, ALLOW),
    };
    checked(&program, SYS_prlimit64, prlimit_block, 11);
    // Scheduling of its own process only (not the host's, not another's).
    struct sock_filter priority_block[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(0)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, PRIO_PROCESS, 0, 3),
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(1)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 1, 0),
        STATEMENT(BPF_RET | BPF_K, DENY),
        STATEMENT(BPF_RET | BPF_K, ALLOW),
    };
    checked(&program, SYS_setpriority, priority_block, 7);
    own_pid_only(&program, SYS_sched_setaffinity, 0, self, 1);
    own_pid_only(&program, SYS_sched_setscheduler, 0, self, 1);
    own_pid_only(&program, SYS_sched_setparam, 0, self, 1);
    own_pid_only(&program, SYS_sched_setattr, 0, self, 1);
    // fcntl that points a descriptor's signals at a process (F_SETOWN,
    // F_SETSIG, F_SETOWN_EX): a signal to anyone, once O_ASYNC is set.
    refuse_values(&program, SYS_fcntl, 1, F_SETOWN, F_SETSIG, F_SETOWN_EX);
    // Below Landlock ABI 3 (or without Landlock), truncate(2) by path is
    // not a right Landlock handles.
    if (landlock_abi_applied < 3) {
        emit(&program, STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
        emit(&program, JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_truncate, 0, 1));
        emit(&program, STATEMENT(BPF_RET | BPF_K, DENY));
    }
    // ioctl TIOCSTI pushes input into a terminal; FIOSETOWN and SIOCSPGRP
    // point a descriptor's signals at a process, as F_SETOWN does.
    refuse_values(&program, SYS_ioctl, 1, TIOCSTI, FIOSETOWN, SIOCSPGRP);
    // socket: never AF_UNIX (a pathname socket is a door out: D-Bus, a
    // runtime's socket); AF_INET and AF_INET6 as granted; nothing else.
    // socketpair stays: a connected pair reaches nobody.
    uint32_t inet_allowed = policy->network || policy->udp || policy->connects > 0 || policy->binds > 0;
    uint32_t any_type = policy->network || policy->udp;
    // AF_UNIX fails quietly: libdispatch's workers log to syslog over one
    // when raising their priority fails (it does once capabilities are
    // dropped), which would otherwise report a denial for every child.
    struct sock_filter socket_plain[] = {
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(0)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 11, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 8),
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(1)),
        STATEMENT(BPF_ALU | BPF_AND | BPF_K, 0xf),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 4),
        // A stream socket is TCP only: Landlock's port rules bind TCP, not
        // SCTP or MPTCP.
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(2)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 2),
        STATEMENT(BPF_RET | BPF_K, inet_allowed ? ALLOW : DENY),
        STATEMENT(BPF_RET | BPF_K, any_type ? ALLOW : DENY),
        STATEMENT(BPF_RET | BPF_K, DENY),
        STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    checked(&program, SYS_socket, socket_plain, 14);
    emit(&program, STATEMENT(BPF_RET | BPF_K, ALLOW));
    if (program.length >= 512) {
        note("missing seccomp the filter is too long\n");
        return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = denied;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) {
        note("missing seccomp its SIGSYS handler could not be set (%s)\n", strerror(errno));
        return -1;
    }
    denial_fd = policy->denial_fd;
    struct sock_fprog filter = {(unsigned short)program.length, program.code};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter) != 0) {
        note("missing seccomp the filter could not be installed (%s)\n", strerror(errno));
        return -1;
    }
    note("reached seccomp\n");
    return 0;
#endif
}
