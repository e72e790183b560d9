// The scanner child's entry and the host's way of starting one.
//
// Any executable that links PlugboardHost can be its own scanner: the host
// starts /proc/self/exe with PLUGBOARD_SCANNER=1 and this constructor takes
// over before the program's main runs, so no host code (and no hook a host
// author could forget) is involved. Shared libraries, the Swift runtime and
// the SDK are initialised before an executable's constructors run.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "plugboard_host.h"

// Defined in Swift (PlugboardLoading/ScannerChild.swift); never returns. An
// isolated plugin's child is another program (plugboard-child).
extern void plugboard_scanner_main(int channel) __attribute__((noreturn));

__attribute__((constructor)) static void plugboard_scanner_hook(void) {
    const char *mode = getenv(PLUGBOARD_SCANNER_VARIABLE);
    if (mode == NULL) return;
    if (strcmp(mode, PLUGBOARD_SCANNER_PROTOCOL) != 0) return;
    // Not inherited by anything a plugin starts.
    unsetenv(PLUGBOARD_SCANNER_VARIABLE);
    // Die with the host; nothing but the channel and stdio stays open.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    closefrom(PLUGBOARD_SCANNER_CHANNEL_FD + 1);
    fcntl(PLUGBOARD_SCANNER_CHANNEL_FD, F_SETFD, FD_CLOEXEC);
    plugboard_sandbox_apply(2);
    plugboard_scanner_main(PLUGBOARD_SCANNER_CHANNEL_FD);
}

// Starts `path` with the file actions `actions` (then destroyed), in its own
// process group (a timeout or crash kills whatever the plugin started too),
// with default signal dispositions and an empty mask, and stdin /dev/null.
// Descriptors from `first_closed` up are closed before the exec: one the
// host's process holds without close-on-exec (another thread's, opened by a
// library) is not kept open by the child while it starts, where its late
// close would tell inotify watchers a file was written.
int plugboard_spawn_child(const char *path, char *const argv[], char *const envp[], posix_spawn_file_actions_t *actions,
                          int first_closed, pid_t *pid) {
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(actions, first_closed);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    int result = posix_spawn(pid, path, actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(actions);
    posix_spawnattr_destroy(&attributes);
    return result;
}

int plugboard_spawn_scanner(const char *path, char *const argv[], char *const envp[], int *channel, int *errors,
                            pid_t *pid) {
    int sockets[2], pipes[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return errno;
    if (pipe2(pipes, O_CLOEXEC) != 0) {
        int saved = errno;
        close(sockets[0]);
        close(sockets[1]);
        return saved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // dup2 onto a new number clears close-on-exec there: only these survive.
    posix_spawn_file_actions_adddup2(&actions, pipes[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipes[1], 2);
    posix_spawn_file_actions_adddup2(&actions, sockets[1], PLUGBOARD_SCANNER_CHANNEL_FD);
    int result = plugboard_spawn_child(path, argv, envp, &actions, PLUGBOARD_SCANNER_CHANNEL_FD + 1, pid);
    close(sockets[1]);
    close(pipes[1]);
    if (result != 0) {
        close(sockets[0]);
        close(pipes[0]);
        return result;
    }
    *channel = sockets[0];
    *errors = pipes[0];
    return 0;
}

int plugboard_spawn_isolated(const char *path, char *const argv[], char *const envp[], int *requests, int *replies,
                             int *output, int *log, int *storage, const int rings[2], pid_t *pid) {
    // [0]: read end, [1]: write end. The host keeps requests[1], replies[0],
    // output[0], log[0] and storage[1]; the child gets the other ends as
    // fds 3, 4, 1+2, 5 and 6.
    int pipes[5][2];
    int made = 0;
    for (; made < 5; made++) {
        if (pipe2(pipes[made], O_CLOEXEC) != 0) {
            int saved = errno;
            for (int i = 0; i < made; i++) {
                close(pipes[i][0]);
                close(pipes[i][1]);
            }
            return saved;
        }
    }
    // The ends each side keeps: for the host, the other ends go to the child.
    const int child_end[5] = {0, 1, 1, 1, 0};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2);
    posix_spawn_file_actions_adddup2(&actions, pipes[0][0], PLUGBOARD_ISOLATED_REQUESTS_FD);
    posix_spawn_file_actions_adddup2(&actions, pipes[1][1], PLUGBOARD_ISOLATED_REQUESTS_FD + 1);
    posix_spawn_file_actions_adddup2(&actions, pipes[3][1], PLUGBOARD_ISOLATED_LOG_FD);
    posix_spawn_file_actions_adddup2(&actions, pipes[4][0], PLUGBOARD_ISOLATED_STORAGE_FD);
    for (int i = 0; i < 2; i++) {
        if (rings[i] >= 0) posix_spawn_file_actions_adddup2(&actions, rings[i], PLUGBOARD_ISOLATED_RINGS_FD + i);
    }
    // Without rings, fds 7 and 8 are closed too: a host descriptor there must not reach the child.
    int result = plugboard_spawn_child(path, argv, envp, &actions, PLUGBOARD_ISOLATED_RINGS_FD + (rings[0] >= 0 ? 2 : 0), pid);
    for (int i = 0; i < 5; i++) close(pipes[i][child_end[i]]);
    if (result != 0) {
        for (int i = 0; i < 5; i++) close(pipes[i][1 - child_end[i]]);
        return result;
    }
    *requests = pipes[0][1];
    *replies = pipes[1][0];
    *output = pipes[2][0];
    *log = pipes[3][0];
    *storage = pipes[4][1];
    return 0;
}
