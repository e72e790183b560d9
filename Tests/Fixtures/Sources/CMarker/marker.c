// A plain C library that looks like a plugin from outside: it exports
// plugboard_entry and references the SDK's ABI marker, but has no Swift code.
// Its constructor writes a marker file, so a test can tell whether it ran.
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "marker.h"

extern const uint32_t plugboard_sdk_abi_2_0;

__attribute__((constructor)) static void plugboard_fixture_marker(void) {
    const char *path = getenv("PLUGBOARD_FIXTURE_MARKER");
    if (path == NULL) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        write(fd, "ran\n", 4);
        close(fd);
    }
}

const void *plugboard_entry(void) { return &plugboard_sdk_abi_2_0; }
