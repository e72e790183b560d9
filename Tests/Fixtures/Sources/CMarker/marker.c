// A plain C library that looks like a plugin from outside: it exports
// plugboard_entry and references the SDK's ABI marker, but has no Swift code.
// Its constructor (ConstructorMarkC) writes a marker file, so a test can tell
// whether it ran.
#include <stdint.h>
#include "marker.h"
#include "constructor_mark.h"

extern const uint32_t plugboard_sdk_abi_2_0;

const void *plugboard_entry(void) { return &plugboard_sdk_abi_2_0; }
