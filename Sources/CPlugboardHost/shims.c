#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
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

int plugboard_has_access_control_list(const char *path) {
    return getxattr(path, "system.posix_acl_access", NULL, 0) > 0;
}
