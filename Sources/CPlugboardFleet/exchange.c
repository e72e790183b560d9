#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "plugboard_fleet.h"

int fleet_rename_exchange(const char *from, const char *to) {
    // Through syscall(2): older glibc headers lack the renameat2 wrapper.
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 2 /* RENAME_EXCHANGE */);
}
