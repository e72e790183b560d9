import DemoInterfaces
import Foundation
@_spi(PlugboardHost) import Plugboard
import PlugboardDemo
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Synchronization
import Testing

@Suite struct EventHubTests {
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    struct Ping: PluginEvent {
        static let name = "ping"
        let n: Int
    }

    /// The bus a plugin gets from the host: typed publishes of the same type
    /// are delivered in place.
    static func bus(hub: EventHub, owner: ServiceOwner) -> any EventBus {
        PluginEventBus(hub: hub, owner: owner).directEventBus()
    }

    /// A plugin built against SDK 2.0 or 2.1 inlined `publish` and
    /// `subscribe` as a payload and a payload handler; so does any bus that
    /// is not the host's `directEventBus()`. Both kinds of publisher and of
    /// subscriber meet on one hub, in subscription order, and a typed
    /// publish makes its payload once, for the subscribers that need one.
    @Test(arguments: [true, false])
    func typedAndPayloadPublishersAndSubscribersMeetInOrder(directPublisher: Bool) {
        let hub = EventHub(report: DiagnosticLog().append)
        let log = Log()
        let payloads = Mutex<[EventPayload]>([])
        let direct = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "direct"))
        let old = PluginEventBus(hub: hub, owner: ServiceOwner(pluginID: "old"))
        direct.subscribe(Ping.self) { log.add("direct \($0.n)") }
        old.subscribe(Ping.self) { log.add("old \($0.n)") }
        direct.subscribe(to: "ping") { payload in
            payloads.withLock { $0.append(payload) }
            log.add("payload \(try payload.decode(Ping.self).n)")
        }
        direct.subscribe(PingCopy.self) { log.add("copy \($0.n)") }
        old.subscribe(to: "ping") { payload in
            payloads.withLock { $0.append(payload) }
            log.add("old payload \(try payload.decode(PingCopy.self).n)")
        }
        let publisher: any EventBus = directPublisher ? direct : old
        let delivery = publisher.publish(Ping(n: 3))
        #expect(delivery == EventDelivery(event: "ping", delivered: 5, failures: [], cycle: nil))
        #expect(log.all == ["direct 3", "old 3", "payload 3", "copy 3", "old payload 3"])
        let seen = payloads.withLock { $0 }
        #expect(seen.count == 2 && seen[0] === seen[1], "one payload per publish")
    }

    @Test func deliveryIsSynchronousInSubscriptionOrderOnThePublishingThread() {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let log = Log()
        let publisher = pthread_self()
        for name in ["first", "second", "third"] {
            Self.bus(hub: hub, owner: ServiceOwner(pluginID: name)).subscribe(Ping.self) { event in
                log.add("\(name) \(event.n) \(pthread_equal(pthread_self(), publisher) != 0 ? "same-thread" : "other-thread")")
            }
        }
        let delivery = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub")).publish(Ping(n: 1))
        #expect(delivery == EventDelivery(event: "ping", delivered: 3, failures: [], cycle: nil))
        #expect(log.all == ["first 1 same-thread", "second 1 same-thread", "third 1 same-thread"])
    }

    /// A typed publish straight to the hub, counting the payloads it makes.
    static func publishCounting(_ hub: EventHub, _ event: Ping, payloads: Log) -> EventDelivery {
        withUnsafePointer(to: event) { value in
            hub.publish(Ping.name, type: ObjectIdentifier(Ping.self), value: UnsafeRawPointer(value), payload: {
                payloads.add("payload")
                return EventPayload(event)
            }, from: ServiceOwner(pluginID: "pub"))
        }
    }

    /// The payload is made only while some subscriber needs one: staged
    /// subscribers do not count, and the hub goes back to handing the value
    /// in place when the last such subscriber leaves.
    @Test func aTypedPublishMakesAPayloadOnlyWhileASubscriberNeedsOne() {
        let hub = EventHub(report: DiagnosticLog().append)
        let log = Log()
        let payloads = Log()
        func made(_ n: Int) -> Int {
            let before = payloads.all.count
            #expect(Self.publishCounting(hub, Ping(n: n), payloads: payloads).failures == [])
            return payloads.all.count - before
        }
        for name in ["a", "b"] {
            Self.bus(hub: hub, owner: ServiceOwner(pluginID: name)).subscribe(Ping.self) { log.add("\(name) \($0.n)") }
        }
        #expect(made(1) == 0, "all of the value's type: in place")
        let staged = ServiceOwner(pluginID: "reloading", generation: 2)
        Self.bus(hub: hub, owner: staged).subscribe(to: "ping") { _ in log.add("staged") }
        hub.stage(staged)
        #expect(made(2) == 0, "a staged subscriber needs nothing yet")
        hub.unstage(staged)
        #expect(made(3) == 1, "an untyped subscriber: one payload")
        let copy = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "copy")).subscribe(PingCopy.self) { log.add("copy \($0.n)") }
        #expect(made(4) == 1, "two that need it: still one")
        copy.cancel()
        hub.removeAll(owner: staged)
        #expect(made(5) == 0, "the last that needed one left")
        #expect(log.all == ["a 1", "b 1", "a 2", "b 2", "a 3", "b 3", "staged", "a 4", "b 4", "staged", "copy 4", "a 5", "b 5"])
    }

    /// A typed handler that throws costs its own delivery only, whether all
    /// subscribers take the value's type or some need the payload; the
    /// failure names its plugin.
    @Test(arguments: [false, true])
    func aTypedHandlerThatThrowsIsReportedWithItsPlugin(mixed: Bool) {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let log = Log()
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "first")).subscribe(Ping.self) { log.add("first \($0.n)") }
        if mixed { Self.bus(hub: hub, owner: ServiceOwner(pluginID: "untyped")).subscribe(to: "ping") { _ in log.add("untyped") } }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "broken")).subscribe(Ping.self) { _ in throw CancellationError() }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "last")).subscribe(Ping.self) { log.add("last \($0.n)") }
        let delivery = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub")).publish(Ping(n: 6))
        #expect(delivery.delivered == (mixed ? 3 : 2))
        #expect(delivery.failures.count == 1 && delivery.failures.first?.hasPrefix("broken failed to handle ping") == true, "\(delivery.failures)")
        #expect(log.all == (mixed ? ["first 6", "untyped", "last 6"] : ["first 6", "last 6"]))
        #expect(diagnostics.all.map(\.plugin) == ["broken"])
    }

    /// A typed handler that publishes its own event again closes a cycle:
    /// stopped and reported, as a payload publish is.
    @Test func aTypedRepublishIsStoppedAsACycle() {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let bus = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "echo"))
        let inner = Mutex<EventDelivery?>(nil)
        bus.subscribe(Ping.self) { event in
            let again = bus.publish(Ping(n: event.n + 1))
            inner.withLock { $0 = again }
        }
        #expect(bus.publish(Ping(n: 1)).delivered == 1)
        #expect(inner.withLock { $0 }?.cycle == ["ping", "ping"])
        #expect(diagnostics.all.map(\.code) == ["event-cycle"])
    }

    /// Another plugin's copy of `Ping`: same name and shape, another Swift
    /// type. Counts how often it is decoded.
    struct PingCopy: PluginEvent {
        static let name = "ping"
        /// Decodes by value of `n`: tests running beside each other count their own.
        static let decodes = Mutex<[Int: Int]>([:])
        let n: Int
        init(n: Int) { self.n = n }
        init(from decoder: any Decoder) throws {
            n = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .n)
            Self.decodes.withLock { [n] in $0[n, default: 0] += 1 }
        }
    }

    @Test func subscribersOfAnotherTypeShareOneDecodeAndTheSameTypeGetsTheValueItself() {
        let hub = EventHub(report: DiagnosticLog().append)
        let log = Log()
        for index in 0..<3 {
            Self.bus(hub: hub, owner: ServiceOwner(pluginID: "copy\(index)")).subscribe(PingCopy.self) { log.add("copy \($0.n)") }
        }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "same")).subscribe(Ping.self) { log.add("same \($0.n)") }
        // A value no other test publishes.
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub")).publish(Ping(n: 7_171))
        #expect(log.all == ["copy 7171", "copy 7171", "copy 7171", "same 7171"])
        #expect(PingCopy.decodes.withLock { $0[7_171] } == 1, "one decode per subscriber type and publish")
    }

    struct Measured: PluginEvent {
        static let name = "measured"
        let count: Int
        let ratio: Double
    }

    /// `Measured` as another plugin declares it: the numbers' types swapped.
    struct MeasuredElsewhere: PluginEvent {
        static let name = "measured"
        let count: Double
        let ratio: Int
    }

    /// A third plugin's copy whose shape does not match.
    struct MeasuredWrongly: PluginEvent {
        static let name = "measured"
        let count: String
    }

    @Test func anotherTypeGetsTheValueByTheCompactCoderWithJSONsNumberRules() throws {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let log = Log()
        let nan = Log()
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "elsewhere")).subscribe(MeasuredElsewhere.self) { event in
            log.add("\(event.count) \(event.ratio)")
        }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "wrongly")).subscribe(MeasuredWrongly.self) { log.add($0.count) }
        let publisher = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub"))
        let delivery = publisher.publish(Measured(count: 3, ratio: 2))
        #expect(log.all == ["3.0 2"], "an Int read as a Double, a whole Double as an Int")
        #expect(delivery.delivered == 1)
        #expect(delivery.failures.count == 1 && delivery.failures[0].hasPrefix("wrongly failed to handle measured"))
        #expect(diagnostics.all.map(\.code) == ["event-handler-failed"])

        // A value JSON cannot carry (JSONEncoder refuses NaN) still crosses:
        // within a process an event is not JSON.
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "reader")).subscribe(to: "nan") { payload in
            struct Reading: PluginEvent { static let name = "nan"; let value: Double }
            nan.add(try payload.decode(Reading.self).value.isNaN ? "nan" : "number")
        }
        struct Sensor: PluginEvent { static let name = "nan"; let value: Double }
        let crossed = publisher.publish(Sensor(value: .nan))
        #expect(crossed.failures == [])
        #expect(nan.all == ["nan"])
        let payload = EventPayload(Sensor(value: .nan))
        #expect(throws: (any Error).self, "JSON is still what json() gives") { try payload.json() }
    }

    struct Linked: PluginEvent {
        static let name = "linked"
        static let encodes = Atomic<Int>(0)
        let url: URL
        init(url: URL) { self.url = url }
        func encode(to encoder: any Encoder) throws {
            Self.encodes.add(1, ordering: .relaxed)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
        }
    }

    /// `Linked` as a plugin that keeps the link as a string declares it.
    struct LinkedAsText: PluginEvent {
        static let name = "linked"
        let url: String
    }

    @Test func aTypeJSONWritesApartFromItsShapeStillCrossesAndIsEncodedOnce() {
        let hub = EventHub(report: DiagnosticLog().append)
        let log = Log()
        for index in 0..<3 {
            Self.bus(hub: hub, owner: ServiceOwner(pluginID: "text\(index)")).subscribe(LinkedAsText.self) { log.add($0.url) }
        }
        let before = Linked.encodes.load(ordering: .relaxed)
        let delivery = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub")).publish(Linked(url: URL(string: "https://example.com/a")!))
        #expect(delivery.failures == [], "a URL read as a string, as across processes (JSON)")
        #expect(log.all == Array(repeating: "https://example.com/a", count: 3))
        #expect(Linked.encodes.load(ordering: .relaxed) - before == 2, "one compact encode, one JSON encode, for three subscribers")

        // Subscribers whose type does not match at all: each fails, and the
        // value is still encoded once each way, not once per subscriber.
        let mismatched = EventHub(report: DiagnosticLog().append)
        for index in 0..<3 {
            Self.bus(hub: mismatched, owner: ServiceOwner(pluginID: "number\(index)")).subscribe(LinkedAsNumber.self) { _ in }
        }
        let again = Linked.encodes.load(ordering: .relaxed)
        let failed = Self.bus(hub: mismatched, owner: ServiceOwner(pluginID: "pub")).publish(Linked(url: URL(string: "https://example.com/b")!))
        #expect(failed.failures.count == 3)
        #expect(Linked.encodes.load(ordering: .relaxed) - again == 2)
    }

    struct LinkedAsNumber: PluginEvent {
        static let name = "linked"
        let url: Int
    }

    @Test func aStagedGenerationGetsNothingUntilItIsSwitchedToOrUnstaged() {
        let hub = EventHub(report: DiagnosticLog().append)
        let log = Log()
        let old = ServiceOwner(pluginID: "plugin", generation: 1), new = ServiceOwner(pluginID: "plugin", generation: 2)
        let other = ServiceOwner(pluginID: "other")
        let publisher = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub"))
        Self.bus(hub: hub, owner: old).subscribe(Ping.self) { log.add("old \($0.n)") }
        hub.stage(new)
        let staged = Self.bus(hub: hub, owner: new).subscribe(Ping.self) { log.add("new \($0.n)") }
        Self.bus(hub: hub, owner: new).subscribe(Ping.self) { log.add("new again \($0.n)") }
        Self.bus(hub: hub, owner: other).subscribe(Ping.self) { log.add("other \($0.n)") }
        publisher.publish(Ping(n: 1))
        #expect(log.all == ["old 1", "other 1"], "the staged generation is held back")

        staged.cancel()
        hub.switchOver(from: old, to: new)
        publisher.publish(Ping(n: 2))
        #expect(log.all.suffix(2) == ["new again 2", "other 2"], "after the switch: the new generation, not the old, not the cancelled")

        // A rolled-back reload: a staged generation unstaged delivers again.
        let third = ServiceOwner(pluginID: "plugin", generation: 3)
        hub.stage(third)
        Self.bus(hub: hub, owner: third).subscribe(Ping.self) { log.add("third \($0.n)") }
        publisher.publish(Ping(n: 3))
        #expect(log.all.suffix(2) == ["new again 3", "other 3"])
        hub.unstage(third)
        publisher.publish(Ping(n: 4))
        #expect(log.all.suffix(3) == ["new again 4", "other 4", "third 4"])

        hub.removeAll(owner: new)
        hub.removeAll(owner: third)
        publisher.publish(Ping(n: 5))
        #expect(log.all.last == "other 5" && !log.all.contains("new again 5"))
    }

    @Test func aFailingHandlerIsReportedAndTheOthersStillRun() {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let log = Log()
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "broken")).subscribe(to: "ping") { _ in throw CancellationError() }
        // Decoding into the wrong shape fails too, for that subscriber only.
        struct Other: PluginEvent { static let name = "ping"; let text: String }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "mismatch")).subscribe(Other.self) { _ in log.add("never") }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "fine")).subscribe(Ping.self) { log.add("fine \($0.n)") }
        let delivery = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "pub")).publish(Ping(n: 2))
        #expect(delivery.delivered == 1)
        #expect(delivery.failures.count == 2)
        #expect(log.all == ["fine 2"])
        #expect(diagnostics.all.map(\.code) == ["event-handler-failed", "event-handler-failed"])
        #expect(diagnostics.all.map(\.plugin) == ["broken", "mismatch"])
    }

    @Test func aHandlerThatRepublishesIsStoppedAsACycleAndReported() {
        let diagnostics = DiagnosticLog()
        let hub = EventHub(report: diagnostics.append)
        let a = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "a")), b = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "b"))
        let count = Mutex(0)
        a.subscribe(to: "x") { _ in count.withLock { $0 += 1 }; b.publish(EventPayload(name: "y", json: [])) }
        b.subscribe(to: "y") { _ in a.publish(EventPayload(name: "x", json: [])) }
        let delivery = a.publish(EventPayload(name: "x", json: []))
        #expect(delivery.delivered == 1)
        #expect(count.withLock { $0 } == 1, "x was delivered once, the re-publish stopped")
        let cycle = diagnostics.all.first { $0.code == "event-cycle" }
        #expect(cycle?.message.contains("x → y → x") == true)
        // A later, separate publish is delivered again.
        a.publish(EventPayload(name: "x", json: []))
        #expect(count.withLock { $0 } == 2)
    }

    @Test func cancelledAndRetiredSubscriptionsGetNothing() {
        let hub = EventHub(report: { _ in })
        let log = Log()
        let subscription = Self.bus(hub: hub, owner: ServiceOwner(pluginID: "a")).subscribe(to: "e") { _ in log.add("a") }
        Self.bus(hub: hub, owner: ServiceOwner(pluginID: "b")).subscribe(to: "e") { _ in log.add("b") }
        subscription.cancel()
        hub.removeAll(owner: ServiceOwner(pluginID: "b"))
        #expect(Self.bus(hub: hub, owner: ServiceOwner(pluginID: "p")).publish(EventPayload(name: "e", json: [])).delivered == 0)
        #expect(log.all.isEmpty)
    }

    @Test func theExamplesCouponCycleIsStoppedAndTheCheckoutStillUpdates() throws {
        let dir = try Fixtures.examplesDirectory(["Checkout", "Coupons"])
        let settings = HostSettings(plugins: ["dev.plugboard.example.coupons": .init(overrides: ["reapplyOnRefresh": .bool(true)])])
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, settings: settings, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        try host.loadAll()
        let apply = try #require(host.registry.provider(of: Commands.self) { $0.name == "apply-coupon" })
        #expect(try apply.run(arguments: ["SAVE10"]) == "applied SAVE10; delivered to 1 subscriber(s)")
        #expect(host.diagnostics.contains { $0.code == "event-cycle" && $0.message.contains("coupon.applied → checkout.refreshed → coupon.applied") })
        #expect(try host.router.navigate(to: "/checkout", as: RenderedSection.self).lines.contains { $0.contains("SAVE10 −10%") })
    }
}
