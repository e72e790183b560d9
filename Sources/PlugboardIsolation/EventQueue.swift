import Synchronization

/// How many events wait between an isolated plugin and the host, one way:
/// at most `bound`; past it they are dropped and counted, so a plugin that
/// publishes faster than its subscribers take (or a child that takes
/// events slower than they come) costs a count, never the host's memory.
package final class EventQueue: Sendable {
    let bound: Int
    private let waiting = Atomic<Int>(0)
    /// Events dropped so far.
    package let dropped = Atomic<Int>(0)
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
        return !dropping.exchange(true, ordering: .relaxed)
    }

    /// Counts a dropped event someone must be told of (``takeUntold()``):
    /// whether to report it (the first of an episode), and whether it is
    /// the first untold (then the teller must be woken: no later event may come).
    func dropToTell() -> (report: Bool, firstUntold: Bool) {
        let firstUntold = untold.add(1, ordering: .acquiringAndReleasing).oldValue == 0
        return (drop(), firstUntold)
    }

    /// Events waiting now.
    var count: Int { waiting.load(ordering: .relaxed) }
}

/// An isolated plugin's two queues, and what its children were sent and
/// said they dropped (a child's word is bounded by what it was sent).
package final class EventQueues: Sendable {
    /// The children's publications, waiting for the host's subscribers.
    package let published: EventQueue
    /// The host's events, waiting to be written to a child.
    package let delivered: EventQueue
    /// Events written to its children.
    let written = Atomic<Int>(0)
    /// Drops its children told, as accepted.
    private let toldByChildren = Atomic<Int>(0)

    init(bound: Int) {
        published = EventQueue(bound: bound)
        delivered = EventQueue(bound: bound)
    }

    /// How many of the `count` drops a child told are taken: no more than
    /// the events written to the children and not yet told of.
    func acceptChildDrops(_ count: Int) -> Int {
        var told = toldByChildren.load(ordering: .relaxed)
        while true {
            let taken = max(0, min(count, written.load(ordering: .relaxed) - told))
            let (exchanged, original) = toldByChildren.compareExchange(expected: told, desired: told + taken, ordering: .relaxed)
            if exchanged { return taken }
            told = original
        }
    }
}
