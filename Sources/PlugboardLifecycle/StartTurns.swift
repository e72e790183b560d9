import Synchronization
import PlugboardCore

/// Starts taking turns, for a host whose last process died while several
/// plugins started side by side and nothing named the one that crashed
/// (``Catalog/Facts/startsOneAtATime``): one start at a time, so the crash
/// journal has one open start to blame if it happens again. Only then: a
/// healthy host starts plugins side by side (``PluginLine``).
final class StartTurns: Sendable {
    private let turn = Mutex(())
    /// The thread whose turn it is: a start nested in its own (an event
    /// handler it ran starts another plugin) is already in its turn.
    private let holder = Atomic<UInt>(0)

    init() {}

    func take<Result>(_ body: () -> Result) -> Result {
        let me = currentThreadIdentity()
        if holder.load(ordering: .acquiring) == me { return body() }
        return turn.withLock { _ in
            holder.store(me, ordering: .releasing)
            defer { holder.store(0, ordering: .releasing) }
            return body()
        }
    }
}
