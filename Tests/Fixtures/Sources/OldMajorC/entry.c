// The C half of a plugin as SDK 1.x built it: its entry point references the
// ABI 1.0 marker, which the 2.0 SDK no longer defines. Its constructor
// (ConstructorMarkC) writes a marker file, so a test can tell whether any of
// its code ran.
#include <stdint.h>
#include "old_major.h"
#include "constructor_mark.h"

extern const uint32_t plugboard_sdk_abi_1_0;

const void *plugboard_entry(void) { return &plugboard_sdk_abi_1_0; }
