import FixtureSupport
import Plugboard
import Synchronization

/// Provides nothing; activated by the event `fixture.ping`, which it then
/// answers with `fixture.pong`.
final class LazyEvent: Plugin {
    let events: any EventBus
    let subscription = Mutex<EventSubscription?>(nil)
    init(context: PluginContext) throws { events = try context.service(Services.Events.self) }
    func activate() throws {
        let events = self.events
        let subscribed = events.subscribe(to: "fixture.ping") { _ in
            events.publish(EventPayload(name: "fixture.pong", json: Array("{}".utf8)))
        }
        subscription.withLock { $0 = subscribed }
    }
    func contributions() -> [Contribution] { [] }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: LazyEvent.self, id: "fixture.lazy-event", version: "1.0.0", provides: [],
        services: [Services.Events.id], activation: [.event("fixture.ping")])
}
