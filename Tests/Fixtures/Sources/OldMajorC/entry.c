// The C half of a plugin as SDK 1.x built it: its entry point references the
// ABI 1.0 marker, which the 2.0 SDK no longer defines. Its constructor writes
// a marker file, so a test can tell whether any of its code ran.
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "old_major.h"

extern const uint32_t plugboard_sdk_abi_1_0;

__attribute__((constructor)) static void plugboard_fixture_old_major(void) {
    const char *path = getenv("PLUGBOARD_FIXTURE_MARKER");
    if (path == NULL) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        write(fd, "ran\n", 4);
        close(fd);
    }
}

const void *plugboard_entry(void) { return &plugboard_sdk_abi_1_0; }
