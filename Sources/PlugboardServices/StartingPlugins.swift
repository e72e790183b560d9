import Synchronization

/// The plugin generations whose start (load, `init`, `activate`) is under
/// way. What one of them asks of the host through its context while it
/// starts (a lookup of a point it publishes, an event, a route) starts
/// nothing and waits on nothing: it gets what is active. The asker is known
/// by the owner its services carry, not by the thread it asks on, so a
/// thread the plugin starts and waits for gets the same answer, and cannot
/// wait for the start that waits for it.
package final class StartingPlugins: Sendable {
    private let owners = Mutex<[ServiceOwner: Int]>([:])
    /// How many starts are under way: the check costs one atomic load when none is.
    private let count = Atomic<Int>(0)

    package init() {}

    /// Whether `owner` is being started now.
    @inline(__always)
    package func contains(_ owner: ServiceOwner) -> Bool {
        guard count.load(ordering: .acquiring) > 0 else { return false }
        return owners.withLock { $0[owner] != nil }
    }

    /// Runs `body`, the start of `owner`.
    package func during<Result, Failure: Error>(_ owner: ServiceOwner, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        owners.withLock { $0[owner, default: 0] += 1 }
        count.add(1, ordering: .releasing)
        defer {
            owners.withLock { owners in
                if owners[owner] == 1 { owners[owner] = nil } else { owners[owner]? -= 1 }
            }
            count.subtract(1, ordering: .releasing)
        }
        return try body()
    }
}
