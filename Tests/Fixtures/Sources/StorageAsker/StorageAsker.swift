import FixtureSupport
import Plugboard

/// Declares events and the router but not storage. Its command `asker`:
/// `direct KEY VALUE` asks for storage itself (refused: not declared);
/// `event KEY VALUE` publishes `fixture.store`; `route KEY VALUE` navigates to
/// the relay's route. Each answers what happened, errors by code and message.
final class StorageAsker: Plugin {
    let context: PluginContext
    init(context: PluginContext) throws { self.context = context }
    func contributions() -> [Contribution] { [.provider(AskerCommand(context: context), for: Commands.self)] }

    struct AskerCommand: Command {
        let context: PluginContext
        var name: String { "asker" }
        var summary: String { "tries to store without declaring storage" }

        func run(arguments: [String]) throws -> String {
            let (key, value) = (arguments[1], arguments[2])
            do {
                switch arguments[0] {
                case "direct":
                    try context.service(Services.Storage.self).set(value, for: key)
                    return "stored"
                case "event":
                    let delivery = try context.service(Services.Events.self).publish(StoreRequest(key: key, value: value))
                    return "delivered \(delivery.delivered), failures \(delivery.failures.count)"
                default:
                    return try context.service(Services.Router.self).navigate(to: "/relay/store/\(key)/\(value)", as: String.self)
                }
            } catch {
                return "\(error.code.rawValue): \(error.message)"
            }
        }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: StorageAsker.self, id: "fixture.storage-asker", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Events.id, Services.Router.id])
}
