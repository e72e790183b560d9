/// A `waitpid` status, read as glibc's WIFSIGNALED, WTERMSIG and
/// WEXITSTATUS macros read it (Swift does not import them).
package enum WaitStatus {
    /// The signal that ended the child (0 if it exited).
    package static func signal(_ status: Int32) -> Int32 { status & 0x7f }

    /// Whether a signal ended the child (0x7f is a stopped child).
    package static func signaled(_ status: Int32) -> Bool { signal(status) != 0 && signal(status) != 0x7f }

    /// The status the child exited with.
    package static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xff }

    /// `was killed by SIGSEGV`, `exited with status 3`.
    package static func describe(_ status: Int32) -> String {
        signaled(status) ? "was killed by \(Signals.name(signal(status)))" : "exited with status \(exitCode(status))"
    }
}
