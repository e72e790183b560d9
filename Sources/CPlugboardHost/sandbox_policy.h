// What the sandbox's files share (sandbox.c applies the layers in order;
// sandbox_seccomp.c builds and installs the seccomp filter). Not part of the
// library's interface: it is beside the sources, not in include/.
#ifndef PLUGBOARD_SANDBOX_POLICY_H
#define PLUGBOARD_SANDBOX_POLICY_H
#include <stdint.h>

// This process's threads now (-1: unknown).
int plugboard_thread_count(void);

// The host's policy, parsed from PLUGBOARD_SANDBOX.

#define MAXIMUM_RULES 64
struct policy {
    const char *read[MAXIMUM_RULES];
    int reads;
    const char *write[MAXIMUM_RULES];
    int writes;
    uint16_t connect[MAXIMUM_RULES];
    int connects;
    uint16_t bind[MAXIMUM_RULES];
    int binds;
    int udp, network;
    /// More rules of one kind than fit: Landlock is then not applied.
    int overflow;
    int off_landlock, off_seccomp, off_limits, off_namespaces, off_network_namespace;
    long long file_size, cpu_seconds, address_space, descriptors, processes;
    int denial_fd;
};

/// Appends a line to the report the child's Swift code reads.
void plugboard_sandbox_note(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// The Landlock ABI whose ruleset was applied (0: none): seccomp covers
/// what an older one does not handle.
extern int plugboard_landlock_abi_applied;

/// Installs the seccomp filter (with TSYNC); 0 or -1, noted either way.
int plugboard_sandbox_apply_seccomp(const struct policy *policy);

#endif
