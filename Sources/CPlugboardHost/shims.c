#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/xattr.h>
#include "plugboard_host.h"

const char *plugboard_image_path(const void *address) {
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0) return NULL;
    return info.dli_fname;
}

int plugboard_under_sanitizer(void) {
    return dlsym(RTLD_DEFAULT, "__tsan_init") != NULL || dlsym(RTLD_DEFAULT, "__asan_init") != NULL
        || dlsym(RTLD_DEFAULT, "__msan_init") != NULL;
}

int plugboard_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }


// libdispatch's hooks for a run loop (CoreFoundation's on Linux): the main
// queue's handle is an eventfd it writes to when work is queued there; the
// callback runs what is queued.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

static void keep_alive(void *timer, void *info) { (void)timer; (void)info; }

// Foundation's main run loop (CoreFoundation's, which serves the main queue
// too), if the program links Foundation: its timers and `RunLoop.main`
// then fire as in a program's main thread. Returns only if it is not loaded.
// Only a program's own Foundation: CoreFoundation takes the thread that
// loaded it for the main thread, and a plugin loads it on another (running
// the main loop here then traps).
static void run_foundation_loop_if_linked(void) {
    void *foundation = dlopen("libFoundation.so", RTLD_LAZY | RTLD_NOLOAD);
    if (foundation == NULL) return;
    int (*run)(const void *, double, unsigned char) = (int (*)(const void *, double, unsigned char))dlsym(foundation, "CFRunLoopRunInMode");
    void *(*main_loop)(void) = (void *(*)(void))dlsym(foundation, "CFRunLoopGetMain");
    void *(*make_timer)(const void *, double, double, unsigned long, long, void (*)(void *, void *), void *) =
        (void *(*)(const void *, double, double, unsigned long, long, void (*)(void *, void *), void *))dlsym(foundation, "CFRunLoopTimerCreate");
    void (*add_timer)(void *, void *, const void *) = (void (*)(void *, void *, const void *))dlsym(foundation, "CFRunLoopAddTimer");
    double (*now)(void) = (double (*)(void))dlsym(foundation, "CFAbsoluteTimeGetCurrent");
    const void *const *mode = (const void *const *)dlsym(foundation, "kCFRunLoopDefaultMode");
    if (run == NULL || main_loop == NULL || make_timer == NULL || add_timer == NULL || now == NULL || mode == NULL) return;
    // A run loop with nothing to wait for returns at once: a daily timer
    // keeps it waiting (what the child did with RunLoop and Timer before).
    add_timer(main_loop(), make_timer(NULL, now() + 86400, 86400, 0, 0, keep_alive, NULL), *mode);
    for (;;) run(*mode, 1e10, 0);
}

// The child's start tells its main thread, before the plugin is loaded,
// whether the plugin (or an interface library it links) needs Foundation:
// then the main thread loads it, so CoreFoundation takes this thread for
// the main one; else the child never maps Foundation (it is not linked:
// the lean child).
static pthread_mutex_t main_thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t main_thread_changed = PTHREAD_COND_INITIALIZER;
static int main_thread_state;  // 0: undecided, 1: decided, 2: done
static int main_thread_foundation;

int plugboard_prepare_main_thread(int foundation) {
    pthread_mutex_lock(&main_thread_lock);
    main_thread_foundation = foundation;
    main_thread_state = 1;
    pthread_cond_broadcast(&main_thread_changed);
    while (main_thread_state != 2) pthread_cond_wait(&main_thread_changed, &main_thread_lock);
    pthread_mutex_unlock(&main_thread_lock);
    return dlopen("libFoundation.so", RTLD_LAZY | RTLD_NOLOAD) != NULL;
}

void plugboard_serve_main_queue(void) {
    // A spare of a plugin that links Foundation: loaded while it waits for its start.
    const char *preload = getenv("PLUGBOARD_CHILD_FOUNDATION");
    if (preload && strcmp(preload, "1") == 0) dlopen("libFoundation.so", RTLD_LAZY | RTLD_GLOBAL);
    pthread_mutex_lock(&main_thread_lock);
    while (main_thread_state == 0) pthread_cond_wait(&main_thread_changed, &main_thread_lock);
    if (main_thread_foundation) dlopen("libFoundation.so", RTLD_LAZY | RTLD_GLOBAL);
    main_thread_state = 2;
    pthread_cond_broadcast(&main_thread_changed);
    pthread_mutex_unlock(&main_thread_lock);
    // Before the plugin is loaded: Foundation, if it is here, is the program's own.
    run_foundation_loop_if_linked();
    int handle = _dispatch_get_main_queue_handle_4CF();
    for (;;) {
        struct pollfd poller = { .fd = handle, .events = POLLIN, .revents = 0 };
        if (poll(&poller, 1, -1) <= 0) continue;
        // Reset before draining: work queued during the drain writes again.
        uint64_t count;
        while (read(handle, &count, sizeof count) < 0 && errno == EINTR) {}
        _dispatch_main_queue_callback_4CF(NULL);
    }
}

// posix_acl_xattr (linux/posix_acl_xattr.h): a 4-byte version (2), then
// 8-byte entries: 2-byte tag, 2-byte permissions, 4-byte id.
int plugboard_acl_grants_named_write(const char *path) {
    unsigned char list[8192];
    ssize_t size = getxattr(path, "system.posix_acl_access", list, sizeof list);
    if (size < 0) return errno == ENODATA || errno == ENOTSUP ? 0 : 1;
    if (size < 4 || (size - 4) % 8 != 0 || list[0] != 2) return 1;
    int mask_write = 1, named_write = 0;
    for (ssize_t at = 4; at < size; at += 8) {
        unsigned tag = list[at] | list[at + 1] << 8;
        unsigned permissions = list[at + 2] | list[at + 3] << 8;
        if (tag == 0x10) mask_write = (permissions & 2) != 0;             // ACL_MASK
        if ((tag == 0x02 || tag == 0x08) && (permissions & 2)) named_write = 1;  // ACL_USER, ACL_GROUP
    }
    return named_write && mask_write;
}

int plugboard_pipe(int fds[2], int nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) == 0 ? 0 : errno;
}

static _Atomic int sigpipe_ignored;

void plugboard_ignore_sigpipe(void) {
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &ignore, NULL) == 0) sigpipe_ignored = 1;
}

ssize_t plugboard_write_no_sigpipe(int fd, const void *bytes, size_t count) {
    // (A plugin that sets SIGPIPE's handler again in a child gets it on a
    // write to a host that is gone: the child ends then anyway.)
    if (sigpipe_ignored) return write(fd, bytes, count);
    sigset_t pipe_only, previous, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    ssize_t written = write(fd, bytes, count);
    int saved = errno;
    if (written < 0 && saved == EPIPE && !was_pending) {
        // Consume the SIGPIPE this write raised, so unblocking does not deliver it.
        struct timespec none = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &none) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = saved;
    return written;
}

long plugboard_pipe_room(int fd) {
    int unread = 0;
    if (ioctl(fd, FIONREAD, &unread) != 0) return -1;
    int capacity = fcntl(fd, F_GETPIPE_SZ);
    if (capacity < 0) return -1;
    return (long)capacity - unread;
}

int plugboard_wait_child_end(int pid, int timeout_ms) {
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
    int fd = (int)syscall(434, pid, 0);
#endif
    if (fd < 0) return -1;
    struct pollfd ended = {fd, POLLIN, 0};
    int ready;
    do { ready = poll(&ended, 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    close(fd);
    return ready > 0 ? 1 : 0;
}
