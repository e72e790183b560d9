import Plugboard
import FixtureSupport
import CPlugboard
#if canImport(Glibc)
import Glibc
#endif
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { forged { $0.magic = 0xDEAD_BEEF } }
