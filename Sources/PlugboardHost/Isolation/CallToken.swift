import CPlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// One isolated plugin's channel carries one call at a time; this is the
/// right to make it, with a deadline: a lock that a waiter can give up on
/// (``Synchronization/Mutex`` cannot), made of one byte in a pipe. Taking it
/// uncontended is one read(2), giving it back one write(2).
final class CallToken: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    private init(readEnd: Int32, writeEnd: Int32) {
        self.readEnd = readEnd
        self.writeEnd = writeEnd
        release()
    }

    /// A new token, free; a failure (with `errno`'s reason) when no pipe
    /// can be made (the process is out of descriptors).
    static func make() -> Result<CallToken, SystemFailure> {
        var ends: [Int32] = [-1, -1]
        let failure = plugboard_pipe(&ends, 1)
        guard failure == 0 else { return .failure(SystemFailure(reason: String(cString: strerror(failure)))) }
        return .success(CallToken(readEnd: ends[0], writeEnd: ends[1]))
    }

    struct SystemFailure: Error {
        let reason: String
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Takes the token, waiting until `deadline` at most; false when it passed.
    func acquire(until deadline: ContinuousClock.Instant) -> Bool {
        var byte: UInt8 = 0
        while true {
            if read(readEnd, &byte, 1) == 1 { return true }
            guard errno == EAGAIN || errno == EINTR else { return false }
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up))))
        }
    }

    func release() {
        var byte: UInt8 = 1
        while write(writeEnd, &byte, 1) < 0 && errno == EINTR {}
    }
}
