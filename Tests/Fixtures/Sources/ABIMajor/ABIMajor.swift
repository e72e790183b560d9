import Plugboard
import FixtureSupport
import CPlugboard
#if canImport(Glibc)
import Glibc
#endif
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { forged { $0.sdk_abi_major = PLUGBOARD_SDK_ABI_MAJOR + 1 } }
