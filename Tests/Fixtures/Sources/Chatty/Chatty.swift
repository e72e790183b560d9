import FixtureSupport
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Writes many lines to stderr while being scanned, then crashes: the
/// quarantine keeps only the last few lines.
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    for line in 1...200 { writeError("chatty line \(line)\n") }
    raise(SIGSEGV)
    fatalError("unreachable")
}
