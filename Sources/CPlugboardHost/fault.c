// Crash attribution: on a fatal signal, find the innermost frame that lies in
// a loaded plugin image and note that plugin in its host's fault file, so the
// next start quarantines the plugin whose code faulted, not whichever plugin
// had a journaled call running.
//
// The table of image ranges is append-only (a Swift image is never unloaded)
// and each entry is published with one atomic store after its fields are set,
// so the handler reads it without a lock. Everything the handler calls is
// async-signal-safe: clock_gettime, open, fstat, writev, close,
// process_vm_readv (a bounded read that fails instead of faulting), sigaction
// and raise.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "plugboard_host.h"
#include "journal_slots.h"

struct image_range {
    uintptr_t start, end;
    int slot;
    uint64_t generation;
    const char *line;
    size_t length;
    // Set last: the handler reads an entry only once this is 1.
    _Atomic int ready;
};

static struct image_range images[PLUGBOARD_FAULT_IMAGES];
static _Atomic int image_count;

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT};
enum { FATAL_SIGNAL_COUNT = sizeof fatal_signals / sizeof fatal_signals[0] };
static struct sigaction previous[FATAL_SIGNAL_COUNT];
static _Atomic int installed;
// One fault is attributed per process: a second thread faulting meanwhile
// goes straight on to the previous handler.
static _Atomic int attributing;
// The attributed fault, for journals registered after the handler passed
// them: its signal (0: none under way) and the blamed slot (-1: no plugin frame).
static _Atomic int attributed_signal;
static _Atomic int attributed_slot = -1;

struct range_search {
    uintptr_t base;
    const char *name;
    uintptr_t start, end;
};

static int find_executable_range(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct range_search *search = context;
    if (info->dlpi_addr != search->base || info->dlpi_name == NULL || strcmp(info->dlpi_name, search->name) != 0) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        uintptr_t end = start + header->p_memsz;
        if (search->start == 0 || start < search->start) search->start = start;
        if (end > search->end) search->end = end;
    }
    return 1;
}

static int index_of(int signo) {
    for (int i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        if (fatal_signals[i] == signo) return i;
    }
    return -1;
}

// The image registered for `address`, or -1.
static int image_holding(uintptr_t address) {
    int count = atomic_load(&image_count);
    if (count > PLUGBOARD_FAULT_IMAGES) count = PLUGBOARD_FAULT_IMAGES;
    for (int i = 0; i < count; i++) {
        if (!atomic_load(&images[i].ready)) continue;
        if (address >= images[i].start && address < images[i].end) return i;
    }
    return -1;
}

// Reads one word at `address` without faulting: 0 when it cannot be read.
static int read_word(uintptr_t address, uintptr_t *value) {
    struct iovec local = {value, sizeof *value};
    struct iovec remote = {(void *)address, sizeof *value};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof *value;
}

// The innermost plugin image on the faulting thread's stack: the faulting
// instruction, then (aarch64) the link register, then each return address
// along the frame-pointer chain, bounded and checked to move up the stack.
static int innermost_plugin_image(const ucontext_t *context) {
    uintptr_t pc = 0, fp = 0;
#if defined(__x86_64__)
    pc = (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
    fp = (uintptr_t)context->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
    pc = (uintptr_t)context->uc_mcontext.pc;
    fp = (uintptr_t)context->uc_mcontext.regs[29];
    int in_link = image_holding((uintptr_t)context->uc_mcontext.regs[30] - 1);
#else
    (void)context;
#endif
    int found = image_holding(pc);
    if (found >= 0) return found;
#if defined(__aarch64__)
    if (in_link >= 0) return in_link;
#endif
    for (int depth = 0; depth < 256 && fp != 0 && fp % sizeof(uintptr_t) == 0; depth++) {
        uintptr_t caller_fp, return_address;
        if (!read_word(fp, &caller_fp) || !read_word(fp + sizeof(uintptr_t), &return_address)) break;
        if (return_address == 0) break;
        // A return address points after the call: look up the call itself.
        found = image_holding(return_address - 1);
        if (found >= 0) return found;
        if (caller_fp <= fp) break;
        fp = caller_fp;
    }
    return -1;
}

// Appends "fault SIGNO SECONDS[ NOTE]\n" to a slot's fault file, opened by
// name and checked to be the file the journal made (a plugin may have
// replaced any descriptor, but not that file's identity).
static void note_fault(struct journal_slot *entry, int signo, const char *line, size_t length) {
    char header[64] = "fault ";
    size_t count = strlen(header);
    count += plugboard_format_decimal(header + count, signo);
    header[count++] = ' ';
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    count += plugboard_format_decimal(header + count, (int64_t)now.tv_sec);
    if (line != NULL) header[count++] = ' ';
    int fd = open(entry->fault_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info;
    if (fstat(fd, &info) == 0 && info.st_dev == (dev_t)atomic_load(&entry->fault_dev)
        && info.st_ino == (ino_t)atomic_load(&entry->fault_ino)) {
        struct iovec parts[3] = {{header, count}, {(void *)line, line != NULL ? length : 0}, {"\n", 1}};
        writev(fd, parts, 3);
        atomic_store(&entry->faulted, 1);
    }
    close(fd);
}

static void chain(int signo, siginfo_t *info, void *context) {
    int index = index_of(signo);
    struct sigaction *before = index >= 0 ? &previous[index] : NULL;
    struct sigaction now;
    if (before != NULL && before->sa_handler != SIG_DFL && before->sa_handler != SIG_IGN && before->sa_handler != NULL) {
        // As the kernel would have run it: a one-shot handler is reset first.
        if (before->sa_flags & SA_RESETHAND) signal(signo, SIG_DFL);
        if (before->sa_flags & SA_SIGINFO) {
            before->sa_sigaction(signo, info, context);
        } else {
            before->sa_handler(signo);
        }
    } else {
        signal(signo, SIG_DFL);
    }
    // A handler that recovers (it left a handler installed) is obeyed. One
    // that reset the default to end the process (the Swift runtime's
    // backtracer does) expects the fault to happen again; end it now
    // instead, before another thread (woken by that handler) finishes its
    // work and exits 0.
    if (sigaction(signo, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL) {
        raise(signo);
    }
}

// The handler before ours recovered from the fault: the process goes on,
// so what was noted of it is dropped and the journals work again.
static void forget_fault(void) {
    for (int slot = 0; slot < PLUGBOARD_JOURNAL_SLOTS; slot++) {
        struct journal_slot *entry = journal_slot_enter(slot, 0);
        if (entry == NULL) continue;
        if (atomic_load(&entry->faulted)) {
            int fd = open(entry->fault_path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            struct stat info;
            if (fd >= 0 && fstat(fd, &info) == 0 && info.st_dev == (dev_t)atomic_load(&entry->fault_dev)
                && info.st_ino == (ino_t)atomic_load(&entry->fault_ino)) {
                ftruncate(fd, 0);
            }
            if (fd >= 0) close(fd);
            atomic_store(&entry->faulted, 0);
        }
        journal_slot_leave(entry);
    }
}

void fault_note_late_journal(struct journal_slot *entry) {
    int signo = atomic_load(&attributed_signal);
    if (signo == 0) return;
    if (atomic_load(&attributed_slot) >= 0) {
        note_fault(entry, signo, "elsewhere", strlen("elsewhere"));
    } else {
        note_fault(entry, signo, NULL, 0);
    }
}

static void on_fatal_signal(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    // A signal another process sent (kill -SEGV) is no fault of the code the
    // thread was running: passed on, not attributed. One this process raised
    // (abort, raise) is.
    int sent_from_outside = info != NULL && info->si_code <= 0 && info->si_pid != getpid();
    int expected = 0;
    int noting = !sent_from_outside && atomic_compare_exchange_strong(&attributing, &expected, 1);
    if (noting) {
        int image = context != NULL ? innermost_plugin_image(context) : -1;
        int blamed_slot = -1;
        if (image >= 0) {
            struct journal_slot *entry = journal_slot_enter(images[image].slot, images[image].generation);
            if (entry != NULL) {
                note_fault(entry, signo, images[image].line, images[image].length);
                blamed_slot = images[image].slot;
                journal_slot_leave(entry);
            }
        }
        // Published before the journals are visited: one registered while
        // they are (another host starting) notes it itself (a
        // sequentially consistent pair with the registration's).
        atomic_store(&attributed_slot, blamed_slot);
        atomic_store(&attributed_signal, signo);
        // Every other journal: with a plugin frame found, its running calls
        // are innocent ("elsewhere"); without one, each keeps its running
        // call's note (evidence "call"), with the signal that ended the process.
        for (int slot = 0; slot < PLUGBOARD_JOURNAL_SLOTS; slot++) {
            if (slot == blamed_slot) continue;
            struct journal_slot *entry = journal_slot_enter(slot, 0);
            if (entry == NULL) continue;
            // What a journal registered now would note itself (published above).
            fault_note_late_journal(entry);
            journal_slot_leave(entry);
        }
    }
    errno = saved_errno;
    chain(signo, info, context);
    // Still here: the handler before ours recovered.
    if (noting) {
        atomic_store(&attributed_signal, 0);
        forget_fault();
        atomic_store(&attributing, 0);
    }
}

static void install_fault_handlers(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return;
    // Under a sanitizer the sanitizer's own reports come first.
    if (plugboard_under_sanitizer()) return;
    for (int i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        // The handler there now, read before ours replaces it: a fault
        // between the two calls still reaches it.
        if (sigaction(fatal_signals[i], NULL, &previous[i]) != 0) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_fatal_signal;
        sigemptyset(&action.sa_mask);
        // SA_ONSTACK: a thread with an alternate stack can still be
        // attributed after a stack overflow. SA_NODEFER, as the Swift
        // runtime's own handler: what runs after us (its backtracer's memory
        // server, a thread cloned from this handler that inherits its mask)
        // catches its own faults, and a blocked fault would kill it mid-reply.
        // A fault in this handler re-enters it and goes straight on (see
        // `attributing`).
        action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        struct sigaction replaced;
        if (sigaction(fatal_signals[i], &action, &replaced) == 0) previous[i] = replaced;
    }
}

int plugboard_fault_register_image(void *handle, int slot, const char *line, size_t length) {
    struct link_map *map = NULL;
    if (handle == NULL || slot < 0 || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) return -1;
    struct range_search search = {map->l_addr, map->l_name, 0, 0};
    dl_iterate_phdr(find_executable_range, &search);
    if (search.start == 0 || search.end <= search.start) return -1;
    uint64_t generation = journal_slot_generation(slot);
    if (generation == 0) return -1;
    int index = atomic_fetch_add(&image_count, 1);
    if (index >= PLUGBOARD_FAULT_IMAGES) return -1;
    char *copy = malloc(length);
    if (copy == NULL) return -1;
    memcpy(copy, line, length);
    images[index].start = search.start;
    images[index].end = search.end;
    images[index].slot = slot;
    images[index].generation = generation;
    images[index].line = copy;
    images[index].length = length;
    atomic_store(&images[index].ready, 1);
    install_fault_handlers();
    return 0;
}

void plugboard_fault_await_end(unsigned seconds) {
    if (!atomic_load(&attributing)) return;
    // A fault is being handled on another thread (the backtracer chained
    // after us may take a while); this thread would otherwise finish and
    // exit 0 while the process is crashing. The fault ends the process
    // during this sleep; a handler that recovered ends the wait early.
    for (unsigned i = 0; i < seconds * 10 && atomic_load(&attributing); i++) usleep(100000);
}
