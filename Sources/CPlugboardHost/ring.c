// The memory of an isolated child's shared-memory rings (Isolation/SharedRing.swift).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "plugboard_host.h"

static const size_t ring_size = PLUGBOARD_RING_HEADER + PLUGBOARD_RING_DATA;
// Neither side may change the size the other mapped (or unseal that).
static const int ring_seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

int plugboard_ring_create(void) {
    int made = memfd_create("plugboard-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (made < 0) return -1;
    // Above the numbers the spawn gives the child (1-8): a ring at one of
    // them would be overwritten by an earlier dup2 of the spawn.
    int fd = fcntl(made, F_DUPFD_CLOEXEC, 10);
    close(made);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)ring_size) != 0 || fcntl(fd, F_ADD_SEALS, ring_seals) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void *plugboard_ring_map(int fd) {
    struct stat status;
    if (fstat(fd, &status) != 0 || (size_t)status.st_size != ring_size) return NULL;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & ring_seals) != ring_seals) return NULL;
    void *ring = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return ring == MAP_FAILED ? NULL : ring;
}

void plugboard_ring_unmap(void *ring) { munmap(ring, ring_size); }

uint64_t plugboard_ring_released(const void *ring) {
    return __atomic_load_n((const uint64_t *)ring, __ATOMIC_ACQUIRE);
}

void plugboard_ring_release(void *ring, uint64_t position) {
    __atomic_store_n((uint64_t *)ring, position, __ATOMIC_RELEASE);
}
