@_spi(PlugboardHost) import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// How a plugin's context hands over a service: boxed by the host with the
/// service's protocol type (no cast to the protocol), or unboxed, as a test
/// harness grants it (cast); a box of another type is no service at all.
@Suite struct GrantedServiceTests {
    func context(_ granted: any Sendable) -> PluginContext {
        PluginContext(
            pluginID: "fixture.granted", pluginVersion: SemanticVersion(1, 0), declaredServices: [Services.Logging.id],
            granted: [Services.Logging.id: granted], denied: [:])
    }

    @Test func aBoxedAndAnUnboxedServiceAreBothHandedOver() throws {
        let logger = HostLogger(label: "fixture.granted", sink: LogSink(minimumLevel: .error) { _ in })
        let boxed = try context(GrantedService<Services.Logging.Service>(logger)).service(Services.Logging.self)
        #expect(boxed is HostLogger)
        let unboxed = try context(logger).service(Services.Logging.self)
        #expect(unboxed is HostLogger)
    }

    @Test func aBoxOfAnotherTypeIsNoService() {
        do {
            _ = try context(GrantedService<Int>(3)).service(Services.Logging.self)
            Issue.record("a box of Int was handed over as a logger")
        } catch {
            #expect(error.code == .serviceUnavailable, "\(error)")
        }
    }
}
