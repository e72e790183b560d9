import Plugboard
import FixtureSupport
import CPlugboard
#if canImport(Glibc)
import Glibc
#endif
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer { forged { $0.toolchain = UnsafePointer(strdup("99.0.0 (https://example.invalid/llvm-project.git 0000000)")) } }
