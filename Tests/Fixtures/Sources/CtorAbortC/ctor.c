// An ELF constructor that aborts: runs inside dlopen, before any entry point.
#include <stdio.h>
#include <stdlib.h>
#include "ctor_abort.h"
__attribute__((constructor)) static void plugboard_fixture_abort(void) {
    fputs("constructor of CtorAbort: aborting on purpose\n", stderr);
    abort();
}
int plugboard_fixture_ctor_abort_linked(void) { return 1; }
