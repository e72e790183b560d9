import FixtureSupport
import Plugboard
import Synchronization

/// Declares storage, events and the router, and stores what others send it:
/// the event `fixture.store` ({key, value}) and the route `/relay/store/{key}/{value}`.
/// Whatever it stores lands in its own storage, never in the sender's.
final class StorageRelay: Plugin {
    let context: PluginContext
    let subscription = Mutex<EventSubscription?>(nil)
    init(context: PluginContext) throws { self.context = context }

    func activate() throws {
        // Storage is looked up inside each handler, while another plugin's
        // publish or navigation is on the stack: it must still be this plugin's.
        let context = self.context
        let subscribed = try context.service(Services.Events.self).subscribe(StoreRequest.self) { request in
            try context.service(Services.Storage.self).set(request.value, for: request.key)
        }
        subscription.withLock { $0 = subscribed }
        try context.service(Services.Router.self).register("/relay/store/{key}/{value}") { match in
            try context.service(Services.Storage.self).set(match.parameter("value") ?? "", for: match.parameter("key") ?? "")
            return "stored by fixture.storage-relay"
        }
    }

    func contributions() -> [Contribution] { [] }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: StorageRelay.self, id: "fixture.storage-relay", version: "1.0.0", provides: [],
        services: [Services.Storage.id, Services.Events.id, Services.Router.id])
}
