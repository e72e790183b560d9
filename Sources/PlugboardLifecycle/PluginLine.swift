import Dispatch
import PlugboardCore

/// One plugin's line: held by whoever starts it, reloads it or stops it in
/// a cascade, so that work on one plugin happens one piece at a time while
/// work on unrelated plugins runs side by side. The lines held now are in
/// the ``PluginTable`` (``PluginTable/lines``): taking one is part of the
/// same table change that takes the plugin (no second lock to order).
///
/// Whoever meets a held line waits for its release: a lookup at most until
/// its deadline (the start timeout), a change (a reload, a cascade) until
/// it is released, since starts always end.
final class PluginLine: Sendable {
    /// What holds it, for a lookup that gave up waiting.
    enum Holder: Sendable {
        /// A start of the plugin, which requires these plugin ids.
        case start(requires: Set<String>, provides: Set<String>)
        /// A reload, a cascade or a shutdown.
        case change
    }

    let holder: Holder
    /// Left once, when the line is released; waiters wait on it. A group,
    /// not a lock: any number of waiters are woken by the one release.
    private let released = DispatchGroup()

    init(_ holder: Holder) {
        self.holder = holder
        released.enter()
    }

    /// Wakes every waiter. Once, by its holder, after the table no longer lists it.
    func release() { released.leave() }

    /// Waits for the release until `deadline`; false when it came first.
    func wait(until deadline: ContinuousClock.Instant) -> Bool { released.wait(until: deadline) }

    /// Waits for the release, however long it takes.
    func wait() { released.wait() }

    /// Whether it is a start of a plugin that requires one of `pluginIDs`.
    func startRequiring(anyOf pluginIDs: Set<String>) -> Bool {
        guard case let .start(requires, _) = holder else { return false }
        return !requires.isDisjoint(with: pluginIDs)
    }

    /// Whether it is a start of a plugin providing `interfaceID`.
    func startProviding(_ interfaceID: String) -> Bool {
        guard case let .start(_, provides) = holder else { return false }
        return provides.contains(interfaceID)
    }
}
