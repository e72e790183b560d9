import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// The child's end of the notice pipe: one write per notice, under a lock,
/// so notices of several threads never interleave.
final class ChildNoticeWriter: Sendable {
    let fd: Int32
    private let writing = Mutex(())
    /// Event names announced to the host, so each is announced once.
    private let announced = Mutex<Set<String>>([])

    init(fd: Int32) { self.fd = fd }

    /// Announces a subscription to `name`, the first time only.
    func announce(_ name: String) {
        if announced.withLock({ $0.insert(name).inserted }) { send(.subscribe(name)) }
    }

    var announcedNames: [String] { announced.withLock { $0.sorted() } }

    func send(_ notice: ChildNotice) {
        let bytes = notice.encoded
        writing.withLock { _ in _ = bytes.withUnsafeBytes { writeAll(fd, $0) } }
    }
}
