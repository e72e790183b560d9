import Plugboard
import PlugboardServices

/// The event bus an isolated plugin gets: its subscriptions are kept in the
/// child (handlers run there) and announced to the host, which forwards
/// matching events; what it publishes goes to the host's bus. Delivery
/// crosses asynchronously: `publish` returns before any subscriber ran, and
/// its ``EventDelivery`` counts none.
struct IsolatedEventBus: EventBus {
    let hub: EventHub
    let owner: ServiceOwner
    let notices: ChildNoticeWriter

    @discardableResult
    func publish(_ event: EventPayload) -> EventDelivery {
        guard let json = try? event.json() else {
            return EventDelivery(event: event.name, delivered: 0, failures: ["the event could not be encoded as JSON"], cycle: nil)
        }
        // The host stops reading a child's notices at a larger one.
        guard json.count + event.name.utf8.count + 1_024 < ChildNotice.maximumLength else {
            return EventDelivery(event: event.name, delivered: 0,
                                 failures: ["the event's JSON takes \(json.count) bytes, over the \(ChildNotice.maximumLength) an isolated plugin may publish"], cycle: nil)
        }
        notices.send(.publish(CrossingEvent(name: event.name, chain: EventHub.currentChain, json: json)))
        return EventDelivery(event: event.name, delivered: 0, failures: [], cycle: nil)
    }

    @discardableResult
    func subscribe(to name: String, _ handler: @escaping @Sendable (EventPayload) throws -> Void) -> EventSubscription {
        let subscription = hub.subscribe(owner: owner, event: name, handler: handler)
        notices.announce(name)
        return subscription
    }
}
