import Synchronization

/// How many events wait between an isolated plugin and the host, one way:
/// at most `bound`; past it they are dropped and counted, so a plugin that
/// publishes faster than its subscribers take (or a child that takes
/// events slower than they come) costs a count, never the host's memory.
final class EventQueue: Sendable {
    let bound: Int
    private let waiting = Atomic<Int>(0)
    /// Events dropped so far.
    let dropped = Atomic<Int>(0)
    /// Dropped and not yet told to the host (a child's queue).
    private let untold = Atomic<Int>(0)
    /// Dropping since the queue was last half empty (reported once per episode).
    private let dropping = Atomic<Bool>(false)

    init(bound: Int) {
        self.bound = bound
    }

    /// Takes a place in the queue; false (nothing taken) when it is full.
    func enter() -> Bool {
        if waiting.add(1, ordering: .acquiringAndReleasing).newValue <= bound { return true }
        waiting.subtract(1, ordering: .relaxed)
        return false
    }

    /// An event left the queue.
    func leave() {
        if waiting.subtract(1, ordering: .acquiringAndReleasing).newValue <= bound / 2 {
            dropping.store(false, ordering: .relaxed)
        }
    }

    /// The drops not told yet, now told (each drop is told once).
    func takeUntold() -> Int {
        untold.load(ordering: .relaxed) == 0 ? 0 : untold.exchange(0, ordering: .acquiringAndReleasing)
    }

    /// Counts a dropped event; true for the first of an episode (to report).
    func drop() -> Bool {
        dropped.add(1, ordering: .relaxed)
        untold.add(1, ordering: .acquiringAndReleasing)
        return !dropping.exchange(true, ordering: .relaxed)
    }

    /// Events waiting now.
    var count: Int { waiting.load(ordering: .relaxed) }
}
