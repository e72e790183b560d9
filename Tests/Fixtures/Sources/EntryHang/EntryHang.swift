import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    writeError("entry of EntryHang: never returning\n")
    while true { sleep(1) }
}
