// The SDK's ABI markers (see plugboard.h). One per supported ABI version;
// a minor release keeps every earlier marker of the same major, a major
// release drops them (so the dynamic linker refuses plugins of an old major).
#include "plugboard.h"

const uint32_t plugboard_sdk_abi_2_0 = 0x0200;
const uint32_t plugboard_sdk_abi_2_1 = 0x0201;
const uint32_t plugboard_sdk_abi_2_2 = 0x0202;
const uint32_t plugboard_sdk_abi_2_3 = 0x0203;
