import Synchronization
import PlugboardAdmission
import PlugboardRegistry

/// The event and route triggers of plugins that are available but not yet
/// active, and the hook that activates them. Checked before every publish
/// and route lookup, so the check costs one atomic load while none is
/// pending.
package final class ActivationTriggers: Sendable {
    private struct Pending {
        var events: [String: Set<String>] = [:]
        /// Route prefixes, split into segments, with the plugins waiting on them.
        var routes: [(segments: [Substring], pluginID: String)] = []
    }

    private let pending = Mutex(Pending())
    private let count = Atomic<Int>(0)
    private let activator: (any PluginActivating)?
    /// Plugins being started: what they publish or route to triggers nothing.
    private let starting: StartingPlugins

    /// `activator`: what activates a triggered plugin (nil: nothing does).
    init(activator: (any PluginActivating)? = nil, starting: StartingPlugins = StartingPlugins()) {
        self.activator = activator
        self.starting = starting
    }

    /// Adds the event and route triggers of an available plugin.
    package func add(_ triggers: [PluginTrigger], for pluginID: String) {
        pending.withLock { pending in
            for trigger in triggers {
                switch trigger {
                case let .event(name): pending.events[name, default: []].insert(pluginID)
                case let .route(segments): pending.routes.append((segments, pluginID))
                case .startup, .command: break
                }
            }
            count.store(pending.events.count + pending.routes.count, ordering: .releasing)
        }
    }

    /// Drops every trigger of plugins that are no longer available.
    package func remove(_ pluginIDs: Set<String>) {
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
    package func removeAll() {
        pending.withLock { pending in
            pending = Pending()
            count.store(0, ordering: .releasing)
        }
    }

    /// Activates the plugins waiting for event `name`, before it is
    /// delivered; none when `publisher` is being started.
    @inline(__always)
    func beforeEvent(_ name: String, from publisher: ServiceOwner) {
        guard count.load(ordering: .acquiring) > 0, !starting.contains(publisher) else { return }
        fire(pending.withLock { $0.events[name] ?? [] })
    }

    /// Activates the plugins waiting for a prefix of `path`, before it is
    /// routed; none when `caller` (nil: the host) is being started.
    @inline(__always)
    func beforeRoute(_ path: String, from caller: ServiceOwner?) {
        guard count.load(ordering: .acquiring) > 0 else { return }
        if let caller, starting.contains(caller) { return }
        let segments = PluginTrigger.segments(Substring(path))
        fire(pending.withLock { pending in
            Set(pending.routes.filter { segments.starts(with: $0.segments) }.map(\.pluginID))
        })
    }

    private func fire(_ pluginIDs: Set<String>) {
        guard !pluginIDs.isEmpty, let activator else { return }
        activator.activate(pluginIDs: pluginIDs)
    }
}
