import Synchronization

/// The event and route triggers of plugins that are available but not yet
/// active, and the hook that activates them. Checked before every publish
/// and route lookup, so the check costs one atomic load while none is
/// pending.
final class ActivationTriggers: Sendable {
    private struct Pending {
        var events: [String: Set<String>] = [:]
        /// Route prefixes, split into segments, with the plugins waiting on them.
        var routes: [(segments: [Substring], pluginID: String)] = []
    }

    private let pending = Mutex(Pending())
    private let count = Atomic<Int>(0)
    private let activator: (any PluginActivating)?

    /// `activator`: what activates a triggered plugin (nil: nothing does).
    init(activator: (any PluginActivating)? = nil) {
        self.activator = activator
    }

    /// Whether `trigger` is one the host understands.
    /// `startup`, `event:NAME` or `command:NAME` (NAME of ASCII letters,
    /// digits, `.`, `-`, `_`) or `route:/PREFIX` (PREFIX of URL path characters: ASCII
    /// letters, digits and `-._~!$&'()*+,;=:@%/{}`), at most 200 bytes: a
    /// trigger is shown to people and must not carry controls.
    static func isValid(_ trigger: String) -> Bool {
        guard trigger.utf8.count <= 200 else { return false }
        if trigger == "startup" { return true }
        if trigger.hasPrefix("route:/") {
            return trigger.utf8.dropFirst("route:".count).allSatisfy { isAlphanumeric($0) || routeSymbols.contains($0) }
        }
        for kind in ["event:", "command:"] where trigger.hasPrefix(kind) {
            let name = trigger.utf8.dropFirst(kind.utf8.count)
            return !name.isEmpty && name.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        }
        return false
    }

    private static let routeSymbols = Set("-._~!$&'()*+,;=:@%/{}".utf8)

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Adds the event and route triggers of an available plugin.
    func add(_ triggers: [String], for pluginID: String) {
        pending.withLock { pending in
            for trigger in triggers {
                if trigger.hasPrefix("event:") {
                    pending.events[String(trigger.dropFirst("event:".count)), default: []].insert(pluginID)
                } else if trigger.hasPrefix("route:") {
                    pending.routes.append((Self.segments(trigger.dropFirst("route:".count)), pluginID))
                }
            }
            count.store(pending.events.count + pending.routes.count, ordering: .releasing)
        }
    }

    /// Drops every trigger of plugins that are no longer available.
    func remove(_ pluginIDs: Set<String>) {
        pending.withLock { pending in
            for name in pending.events.keys {
                pending.events[name]!.subtract(pluginIDs)
                if pending.events[name]!.isEmpty { pending.events[name] = nil }
            }
            pending.routes.removeAll { pluginIDs.contains($0.pluginID) }
            count.store(pending.events.count + pending.routes.count, ordering: .releasing)
        }
    }

    /// Drops every trigger (the host shut down).
    func removeAll() {
        pending.withLock { pending in
            pending = Pending()
            count.store(0, ordering: .releasing)
        }
    }

    /// Activates the plugins waiting for event `name`, before it is delivered.
    @inline(__always)
    func beforeEvent(_ name: String) {
        guard count.load(ordering: .acquiring) > 0 else { return }
        fire(pending.withLock { $0.events[name] ?? [] })
    }

    /// Activates the plugins waiting for a prefix of `path`, before it is routed.
    @inline(__always)
    func beforeRoute(_ path: String) {
        guard count.load(ordering: .acquiring) > 0 else { return }
        let segments = Self.segments(Substring(path))
        fire(pending.withLock { pending in
            Set(pending.routes.filter { segments.starts(with: $0.segments) }.map(\.pluginID))
        })
    }

    private func fire(_ pluginIDs: Set<String>) {
        guard !pluginIDs.isEmpty, let activator else { return }
        activator.activate(pluginIDs: pluginIDs)
    }

    private static func segments(_ path: Substring) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
