import FixtureSupport
import Plugboard
import Synchronization

/// Started at startup; its `activate` publishes `fixture.ping`, the event
/// that starts LazyEvent. The host is inside this plugin's start then: the
/// defined answer is that the event goes to what is already active (nobody)
/// and nothing starts, with no deadlock. Its command says what the publish
/// in `activate` got.
final class ActivateAsks: Plugin, Command {
    let events: any EventBus
    let answer = Mutex("not activated")
    var name: String { "asked" }
    var summary: String { "what the publish in activate got" }
    init(context: PluginContext) throws { events = try context.service(Services.Events.self) }
    func activate() throws {
        let delivery = events.publish(EventPayload(name: "fixture.ping", json: Array("{}".utf8)))
        answer.withLock { $0 = "delivered \(delivery.delivered)" }
    }
    func contributions() -> [Contribution] { [.provider(self, for: Commands.self)] }
    func run(arguments: [String]) throws -> String { answer.withLock { $0 } }
}
@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: ActivateAsks.self, id: "fixture.activate-asks", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Events.id], activation: [.startup])
}
