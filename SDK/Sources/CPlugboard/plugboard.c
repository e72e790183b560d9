// The SDK's ABI markers (see plugboard.h). One per supported ABI version;
// a minor release keeps every earlier marker of the same major.
#include "plugboard.h"

const uint32_t plugboard_sdk_abi_1_0 = 0x0100;
