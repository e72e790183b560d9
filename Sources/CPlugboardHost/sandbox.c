// The sandbox a child applies to itself before any plugin code runs.
//
// Called from the pre-main constructor (scanner.c) of a scanner or isolated
// child, while the process has one thread: Landlock binds the calling thread
// and its future threads only, and seccomp is installed with TSYNC anyway.
// The policy comes from the host in PLUGBOARD_SANDBOX (one `key=value` per
// line); what was reached is kept as text for the child's Swift code to
// report (`plugboard_sandbox_report`). Layers, in order: limits,
// capabilities dropped, no new privileges, Landlock (files, TCP ports,
// scopes), seccomp (what Landlock does not see). See docs/sandbox.md.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "plugboard_host.h"
#include "sandbox_policy.h"

// MARK: - Landlock, defined here (Debian 12's headers stop at ABI 2)

struct pb_landlock_ruleset { uint64_t fs, net, scoped; };
struct pb_landlock_path { uint64_t allowed; int32_t parent; } __attribute__((packed));
struct pb_landlock_port { uint64_t allowed; uint64_t port; };
#define PB_LANDLOCK_RULE_PATH 1
#define PB_LANDLOCK_RULE_PORT 2
#define PB_FS_EXECUTE (1ULL << 0)
#define PB_FS_WRITE_FILE (1ULL << 1)
#define PB_FS_READ_FILE (1ULL << 2)
#define PB_FS_READ_DIR (1ULL << 3)
#define PB_FS_REMOVE_DIR (1ULL << 4)
#define PB_FS_REMOVE_FILE (1ULL << 5)
#define PB_FS_MAKE_DIR (1ULL << 7)
#define PB_FS_MAKE_REG (1ULL << 8)
#define PB_FS_TRUNCATE (1ULL << 14)
#define PB_NET_BIND_TCP (1ULL << 0)
#define PB_NET_CONNECT_TCP (1ULL << 1)
#define PB_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define PB_SCOPE_SIGNAL (1ULL << 1)
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// Every file-system right of each ABI: an ABI's new rights are handled
// (denied unless granted) as soon as the kernel knows them.
static uint64_t fs_rights(int abi) {
    uint64_t rights = (1ULL << 13) - 1;  // ABI 1: EXECUTE ... MAKE_SYM
    if (abi >= 2) rights |= 1ULL << 13;  // REFER
    if (abi >= 3) rights |= 1ULL << 14;  // TRUNCATE
    if (abi >= 5) rights |= 1ULL << 15;  // IOCTL_DEV
    return rights;
}

const int plugboard_open_path = O_PATH;

// MARK: - The report

static char report[2048];
/// The Landlock ABI whose ruleset was applied (0: none): seccomp covers
/// what an older one does not handle.
int plugboard_landlock_abi_applied;
#define landlock_abi_applied plugboard_landlock_abi_applied
static size_t report_length;

void plugboard_sandbox_note(const char *format, ...) {
    if (report_length >= sizeof report - 1) return;
    va_list arguments;
    va_start(arguments, format);
    int written = vsnprintf(report + report_length, sizeof report - report_length, format, arguments);
    va_end(arguments);
    if (written > 0) report_length += (size_t)written;
    if (report_length >= sizeof report) report_length = sizeof report - 1;
}

#define note plugboard_sandbox_note

const char *plugboard_sandbox_report(void) { return report_length == 0 ? NULL : report; }

// MARK: - The policy (its fields: sandbox_policy.h)

static int parse(char *text, struct policy *policy) {
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *value = strchr(line, '=');
        if (!value) return -1;
        *value++ = 0;
        if (strcmp(line, "read") == 0) {
            if (policy->reads < MAXIMUM_RULES) policy->read[policy->reads++] = value; else policy->overflow = 1;
        } else if (strcmp(line, "write") == 0) {
            if (policy->writes < MAXIMUM_RULES) policy->write[policy->writes++] = value; else policy->overflow = 1;
        } else if (strcmp(line, "tcp-connect") == 0) {
            if (policy->connects < MAXIMUM_RULES) policy->connect[policy->connects++] = (uint16_t)atoi(value); else policy->overflow = 1;
        } else if (strcmp(line, "tcp-bind") == 0) {
            if (policy->binds < MAXIMUM_RULES) policy->bind[policy->binds++] = (uint16_t)atoi(value); else policy->overflow = 1;
        }
        else if (strcmp(line, "network") == 0) {
            if (strcmp(value, "udp") == 0) policy->udp = 1;
            else if (strcmp(value, "all") == 0) policy->network = 1;
            else return -1;
        } else if (strcmp(line, "off") == 0) {
            if (strcmp(value, "landlock") == 0) policy->off_landlock = 1;
            else if (strcmp(value, "seccomp") == 0) policy->off_seccomp = 1;
            else if (strcmp(value, "limits") == 0) policy->off_limits = 1;
            else if (strcmp(value, "namespaces") == 0) policy->off_namespaces = 1;
            else if (strcmp(value, "network-namespace") == 0) policy->off_network_namespace = 1;
            else return -1;
        } else if (strcmp(line, "file-size") == 0) policy->file_size = atoll(value);
        else if (strcmp(line, "cpu-seconds") == 0) policy->cpu_seconds = atoll(value);
        else if (strcmp(line, "address-space") == 0) policy->address_space = atoll(value);
        else if (strcmp(line, "descriptors") == 0) policy->descriptors = atoll(value);
        else if (strcmp(line, "processes") == 0) policy->processes = atoll(value);
        else return -1;
    }
    return 0;
}

// MARK: - Threads

// Field 20 of /proc/self/stat, after the command name's closing parenthesis
// (also cgroup_join.c's).
int plugboard_thread_count(void) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[1024];
    ssize_t length = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (length <= 0) return -1;
    buffer[length] = 0;
    char *field = strrchr(buffer, ')');
    if (!field) return -1;
    for (int index = 2; index < 20 && field; index++) field = strchr(field + 1, ' ');
    return field ? atoi(field + 1) : -1;
}

// MARK: - Limits, privileges, capabilities

// Set here, not by the child's Swift code: once seccomp is on, no limit
// can be set (raising one is what it refuses).
static int limit(int resource, long long value) {
    if (value <= 0) return 0;
    struct rlimit both = {(rlim_t)value, (rlim_t)value};
    return setrlimit(resource, &both);
}

static int apply_limits(const struct policy *policy) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return limit(RLIMIT_FSIZE, policy->file_size) | limit(RLIMIT_CPU, policy->cpu_seconds)
        | limit(RLIMIT_AS, policy->address_space) | limit(RLIMIT_NOFILE, policy->descriptors)
        | limit(RLIMIT_NPROC, policy->processes);
}

// Empties every capability set, the bounding and ambient ones too: a root
// host's child keeps the uid but not the powers (Landlock and seccomp
// bind root as well).
static int drop_capabilities(void) {
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    for (int capability = 0; capability <= 63; capability++) {
        if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) < 0) break;
        if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 && errno != EINVAL) {
            // Dropping needs CAP_SETPCAP: an ordinary user has nothing to drop.
            if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) == 1 && geteuid() == 0) return -1;
        }
    }
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    return (int)syscall(SYS_capset, &header, data);
}

// MARK: - Namespaces

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t length = (ssize_t)strlen(text);
    ssize_t written = write(fd, text, (size_t)length);
    close(fd);
    return written == length ? 0 : -1;
}

// A user namespace with the child's own ids mapped to themselves, an IPC
// namespace, and a network namespace (only loopback, down) unless a network
// need is granted. Not needed for the guarantees (seccomp refuses what they
// would hide) but a layer more where the kernel allows it. Probed whole: some
// distributions let unshare succeed and refuse the map.
static int apply_namespaces(const struct policy *policy) {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int network = policy->network || policy->udp || policy->connects > 0 || policy->binds > 0 || policy->off_network_namespace;
    int flags = CLONE_NEWUSER | CLONE_NEWIPC | (network ? 0 : CLONE_NEWNET);
    if (unshare(flags) != 0) {
        note("missing namespaces unshare refused them (%s)\n", strerror(errno));
        return -1;
    }
    char map[64];
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    int mapped = write_text("/proc/self/setgroups", "deny") == 0 && write_text("/proc/self/uid_map", map) == 0;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    mapped = mapped && write_text("/proc/self/gid_map", map) == 0;
    if (!mapped) {
        // The namespaces exist; its ids show as the overflow id. Access checks use the real ids.
        note("missing namespaces its ids could not be mapped (%s)\n", strerror(errno));
        return -1;
    }
    note("reached namespaces\n");
    if (!network) note("reached network-namespace\n");
    return 0;
}

// MARK: - Landlock

static int add_path(int ruleset, const char *path, uint64_t rights, int abi) {
    // A folder it may write is never reached through a link planted at its
    // last component (the rule would follow it elsewhere).
    int fd = open(path, O_PATH | O_CLOEXEC | (rights & PB_FS_WRITE_FILE && rights & PB_FS_MAKE_REG ? O_NOFOLLOW : 0));
    if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -1;
    struct stat info;
    if (fstat(fd, &info) == 0 && S_ISLNK(info.st_mode)) {
        close(fd);
        return 0;
    }
    if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) {
        // A file takes file rights only.
        rights &= PB_FS_EXECUTE | PB_FS_WRITE_FILE | PB_FS_READ_FILE | (abi >= 3 ? PB_FS_TRUNCATE : 0) | (abi >= 5 ? 1ULL << 15 : 0);
    }
    struct pb_landlock_path rule = {rights & fs_rights(abi), fd};
    int result = (int)syscall(SYS_landlock_add_rule, ruleset, PB_LANDLOCK_RULE_PATH, &rule, 0);
    close(fd);
    return result;
}

struct mapped { int ruleset, abi, failed; };

// Every object mapped now (the program, its libraries, the Swift runtime),
// readable; and the runtime's own folder, where Foundation and the other
// toolchain libraries a plugin may load later live.
static int add_mapped(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct mapped *mapped = data;
    const char *name = info->dlpi_name;
    if (!name || name[0] != '/') return 0;
    if (add_path(mapped->ruleset, name, PB_FS_READ_FILE, mapped->abi) != 0) mapped->failed = 1;
    const char *base = strrchr(name, '/');
    if (base && strncmp(base + 1, "libswiftCore.so", 15) == 0) {
        char folder[PATH_MAX];
        size_t length = (size_t)(base - name);
        if (length < sizeof folder) {
            memcpy(folder, name, length);
            folder[length] = 0;
            if (add_path(mapped->ruleset, folder, PB_FS_READ_FILE | PB_FS_READ_DIR, mapped->abi) != 0) mapped->failed = 1;
        }
    }
    return 0;
}

static const char *const system_reads[] = {
    "/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo",
    "/dev/urandom", "/dev/random", "/dev/zero", "/sys/devices/system/cpu", "/proc/sys/kernel/cap_last_cap", NULL,
};

static int apply_landlock(const struct policy *policy) {
    if (policy->overflow) {
        note("missing landlock the policy has more than %d rules of one kind\n", MAXIMUM_RULES);
        return -1;
    }
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
    if (abi < 1) {
        note("missing landlock the kernel has no Landlock (%s)\n", strerror(errno));
        return -1;
    }
    note("landlock-abi %d\n", abi);
    struct pb_landlock_ruleset attributes = {fs_rights(abi), 0, 0};
    int network_rules = abi >= 4 && !policy->network;
    if (network_rules) attributes.net = PB_NET_BIND_TCP | PB_NET_CONNECT_TCP;
    if (abi >= 6) attributes.scoped = PB_SCOPE_ABSTRACT_UNIX | PB_SCOPE_SIGNAL;
    size_t size = abi >= 6 ? sizeof attributes : abi >= 4 ? offsetof(struct pb_landlock_ruleset, scoped)
                                                           : offsetof(struct pb_landlock_ruleset, net);
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
    if (ruleset < 0) {
        note("missing landlock the ruleset could not be created (%s)\n", strerror(errno));
        return -1;
    }
    int failed = 0;
    const uint64_t read = PB_FS_READ_FILE | PB_FS_READ_DIR;
    for (const char *const *path = system_reads; *path; path++) failed |= add_path(ruleset, *path, read, abi) != 0;
    // /proc, readable: libdispatch reads /proc/TID/stat of its worker
    // threads by thread id (a name no rule made now can cover) and crashes
    // the process when that fails. Other processes' environment, memory,
    // maps and descriptors stay out of reach: Landlock refuses ptrace-mode
    // access to processes outside the sandbox, which those files need.
    failed |= add_path(ruleset, "/proc", read, abi) != 0;
    failed |= add_path(ruleset, "/dev/null", PB_FS_READ_FILE | PB_FS_WRITE_FILE, abi) != 0;
    struct mapped mapped = {ruleset, abi, 0};
    dl_iterate_phdr(add_mapped, &mapped);
    char program[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    if (length > 0) {
        program[length] = 0;
        failed |= add_path(ruleset, program, PB_FS_READ_FILE, abi) != 0;
    }
    failed |= mapped.failed;
    for (int index = 0; index < policy->reads; index++) failed |= add_path(ruleset, policy->read[index], read, abi) != 0;
    const uint64_t write = read | PB_FS_WRITE_FILE | PB_FS_REMOVE_FILE | PB_FS_REMOVE_DIR | PB_FS_MAKE_REG | PB_FS_MAKE_DIR | PB_FS_TRUNCATE;
    for (int index = 0; index < policy->writes; index++) failed |= add_path(ruleset, policy->write[index], write, abi) != 0;
    if (network_rules) {
        for (int index = 0; index < policy->connects; index++) {
            struct pb_landlock_port rule = {PB_NET_CONNECT_TCP, policy->connect[index]};
            failed |= syscall(SYS_landlock_add_rule, ruleset, PB_LANDLOCK_RULE_PORT, &rule, 0) != 0;
        }
        for (int index = 0; index < policy->binds; index++) {
            struct pb_landlock_port rule = {PB_NET_BIND_TCP, policy->bind[index]};
            failed |= syscall(SYS_landlock_add_rule, ruleset, PB_LANDLOCK_RULE_PORT, &rule, 0) != 0;
        }
    }
    if (failed) {
        note("missing landlock a rule could not be added (%s)\n", strerror(errno));
        close(ruleset);
        return -1;
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        note("missing landlock the ruleset could not be applied (%s)\n", strerror(errno));
        close(ruleset);
        return -1;
    }
    close(ruleset);
    landlock_abi_applied = abi;
    note("reached landlock\n");
    if (network_rules) note("reached landlock-network\n");
    else if (abi < 4) note("missing landlock-network Landlock ABI %d has no TCP port rules (4 has)\n", abi);
    if (abi >= 6) note("reached landlock-scopes\n");
    else note("missing landlock-scopes Landlock ABI %d has no signal scoping (6 has)\n", abi);
    return 0;
}

// MARK: - Applying

int plugboard_sandbox_apply(int denial_fd) {
    const char *given = getenv(PLUGBOARD_SANDBOX_VARIABLE);
    if (!given) return 0;
    char *text = strdup(given);
    unsetenv(PLUGBOARD_SANDBOX_VARIABLE);
    struct policy policy;
    memset(&policy, 0, sizeof policy);
    policy.denial_fd = denial_fd;
    note("requested\n");
    if (!text || parse(text, &policy) != 0) {
        note("missing policy the host's sandbox policy does not parse\n");
        return -1;
    }
    if (plugboard_under_sanitizer()) {
        // Sanitizers need what the sandbox refuses (ptrace at exit, symbolizer execs).
        note("missing sanitizer a sanitizer build applies no sandbox\n");
        return -1;
    }
    int threads = plugboard_thread_count();
    if (threads != 1) {
        note("missing threads the child had %d threads before its sandbox (Landlock binds one)\n", threads);
        return -1;
    }
    if (policy.off_limits) note("missing limits turned off by the host\n");
    else if (apply_limits(&policy) == 0) note("reached limits\n");
    else note("missing limits %s\n", strerror(errno));
    if (policy.off_namespaces) note("missing namespaces turned off by the host\n");
    else apply_namespaces(&policy);
    if (drop_capabilities() == 0) note("reached capabilities\n");
    else note("missing capabilities %s\n", strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        // Without it neither Landlock nor seccomp can be applied unprivileged;
        // applied privileged, they could be shed by an exec of a setuid file.
        note("missing no-new-privileges %s\n", strerror(errno));
        return -1;
    }
    note("reached no-new-privileges\n");
    // No mount namespace (it needs a fork): a scratch folder is bounded per
    // file, not in total. Reported, never needed.
    if (policy.writes > 0) note("missing scratch-tmpfs its scratch folder is bounded per file (RLIMIT_FSIZE), not in total: no mount namespace\n");
    if (policy.off_landlock) note("missing landlock turned off by the host\n");
    else apply_landlock(&policy);
    if (policy.off_seccomp) note("missing seccomp turned off by the host\n");
    else plugboard_sandbox_apply_seccomp(&policy);
    free(text);
    return 0;
}
