import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

enum Name: FixtureName { static let name = "entry-abort" }
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    writeError("entry of EntryAbort: aborting on purpose\n")
    abort()
}
