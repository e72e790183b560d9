// The SDK's ABI markers (see plugboard.h). One per supported ABI version;
// a minor release keeps every earlier marker of the same major.
#include "plugboard.h"

const uint32_t plugboard_sdk_abi_1_0 = 0x0100;
#ifdef PLUGBOARD_TESTING_FUTURE_SDK
const uint32_t plugboard_sdk_abi_1_1 = 0x0101;
#endif
