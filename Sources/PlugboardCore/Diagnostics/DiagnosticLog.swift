import Synchronization

/// The host's diagnostics, appended from any thread: the latest
/// ``capacity`` kept in a ring (a plugin whose event handler fails on every
/// event must not grow the host without bound), each also handed to a sink
/// for hosts that keep their own log.
package final class DiagnosticLog: Sendable {
    private struct Ring {
        var entries: [HostDiagnostic] = []
        /// Index of the oldest entry once the ring is full.
        var start = 0
        var dropped = 0
    }

    let capacity: Int
    private let ring = Mutex(Ring())
    private let sink: (@Sendable (HostDiagnostic) -> Void)?

    package init(capacity: Int = 1_000, sink: (@Sendable (HostDiagnostic) -> Void)? = nil) {
        self.capacity = max(1, capacity)
        self.sink = sink
    }

    @Sendable package func append(_ diagnostic: HostDiagnostic) {
        ring.withLock { ring in
            if ring.entries.count < capacity {
                ring.entries.append(diagnostic)
            } else {
                ring.entries[ring.start] = diagnostic
                ring.start = (ring.start + 1) % capacity
                ring.dropped += 1
            }
        }
        sink?(diagnostic)
    }

    /// The kept diagnostics, oldest first.
    package var all: [HostDiagnostic] {
        ring.withLock { ring in Array(ring.entries[ring.start...] + ring.entries[..<ring.start]) }
    }

    /// How many older diagnostics the ring let go.
    var dropped: Int { ring.withLock { $0.dropped } }
}
