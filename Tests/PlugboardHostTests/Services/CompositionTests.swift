import DemoInterfaces
import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// Screens composed from the example plugins' sections.
@Suite struct CompositionTests {
    /// A host with the examples loaded, and the folder it keeps them, its
    /// data and cache in; the caller shuts the host down and keeps the folder.
    func host(_ settings: HostSettings = HostSettings()) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try Fixtures.examplesDirectory()
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, settings: settings, dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache")))
        host.declareDemoExtensionPoints()
        do {
            try host.loadAll()
        } catch {
            host.shutdown()
            throw error
        }
        return (host, dir)
    }

    func compose(_ host: PluginHost, _ json: String) -> ComposedScreen {
        host.compose(screen: Data(json.utf8), source: "screen.json")
    }

    static let header = #"{ "type": "restaurant-header", "name": "Chez P", "cuisine": "Bistro", "rating": 4.5 }"#
    static let summary = #"{ "type": "checkout-summary", "items": [ { "name": "Soup", "price": 8, "quantity": 2 } ] }"#

    @Test func eachSectionIsRenderedByThePluginThatRegisteredItsType() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let screen = compose(host, #"{ "title": "T", "sections": [ \#(Self.header), { "type": "coupon" }, \#(Self.summary) ] }"#)
        #expect(screen.title == "T")
        #expect(screen.sections.map(\.plugin) == ["dev.plugboard.example.restaurants", "dev.plugboard.example.coupons", "dev.plugboard.example.checkout"])
        #expect(screen.sections[0].rendered == RenderedSection(title: "Chez P", lines: ["Bistro · ★ 4.5"]))
        #expect(screen.sections[2].rendered.lines.last == "Total  16.00")
        #expect(screen.diagnostics.isEmpty)
    }

    @Test func aSectionWithWrongTypesIsDroppedAndTheRestRenders() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let bad = #"{ "type": "menu", "items": [ { "name": "Soup", "price": "cheap" } ] }"#
        let screen = compose(host, #"{ "sections": [ \#(Self.header), \#(bad), \#(Self.summary) ] }"#)
        #expect(screen.sections.map(\.type) == ["restaurant-header", "checkout-summary"])
        let diagnostic = try #require(screen.diagnostics.first)
        #expect(diagnostic.code == "section-decode-failed")
        #expect(diagnostic.file == "screen.json")
        #expect(diagnostic.keyPath == "sections[1]")
        #expect(diagnostic.message.contains("field 'items[0].price' is not a number"))
    }

    @Test func anUnknownSectionTypeIsDroppedWithADiagnostic() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let screen = compose(host, #"{ "sections": [ { "type": "loyalty-banner" }, \#(Self.header), { "kind": "x" }, null, { "type": "nope" } ] }"#)
        #expect(screen.sections.map(\.type) == ["restaurant-header"])
        #expect(screen.diagnostics.map(\.code) == ["section-unknown-type", "section-malformed", "section-malformed", "section-unknown-type"])
        #expect(screen.diagnostics.map(\.keyPath) == ["sections[0]", "sections[2]", "sections[3]", "sections[4]"])
    }

    @Test(arguments: [#"{ "sections": [ "#, "[]", #"{ "sections": 3 }"#, ""])
    func aMalformedScreenDocumentRendersNothingAndSaysWhy(_ document: String) throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        let screen = compose(host, document)
        #expect(screen.sections.isEmpty)
        #expect(screen.diagnostics.map(\.code) == ["screen-malformed"])
        #expect(screen.diagnostics[0].file == "screen.json")
    }

    @Test func aDisabledPluginDegradesGracefully() throws {
        let settings = HostSettings(plugins: ["dev.plugboard.example.restaurants": .init(enabled: false)])
        let (host, dir) = try host(settings)
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        #expect(host.records.first { $0.id == "dev.plugboard.example.restaurants" }?.status == .disabled)
        let screen = compose(host, #"{ "sections": [ \#(Self.header), \#(Self.summary) ] }"#)
        #expect(screen.sections.map(\.type) == ["checkout-summary"], "its section is omitted")
        #expect(screen.diagnostics.map(\.code) == ["section-unknown-type"])
        expectServiceError(.routeNotFound) { _ = try host.router.navigate(to: "/restaurants/42") }
    }

    @Test func twoPluginsRenderingOneSectionTypeAreReportedAndTheFirstByIDRenders() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        host.load(files: [try Fixtures.library("CouponRival").path])
        let screen = compose(host, #"{ "sections": [ { "type": "coupon" } ] }"#)
        #expect(screen.sections.map(\.plugin) == ["dev.plugboard.example.coupons"])
        let conflict = try #require(screen.diagnostics.first)
        #expect(conflict.code == "section-type-conflict")
        #expect(conflict.plugin == "zz.fixture.coupon-rival")
    }

    @Test func validationRunsOnAdoptersOnlyAndAggregates() throws {
        let (host, dir) = try host()
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        _ = compose(host, #"{ "sections": [ { "type": "checkout-summary", "items": [] } ] }"#)
        let apply = try #require(host.registry.provider(of: Commands.self) { $0.name == "apply-coupon" })
        _ = try apply.run(arguments: ["EXPIRED20"])
        let failing = host.validate()
        // Two adopters (coupon and checkout sections); restaurants does not adopt Validating.
        #expect(failing.results.map(\.plugin) == ["dev.plugboard.example.checkout", "dev.plugboard.example.coupons"])
        #expect(!failing.passed)
        #expect(failing.issues.map(\.field) == ["cart.items", "coupon.code"])
        _ = compose(host, #"{ "sections": [ \#(Self.summary) ] }"#)
        _ = try apply.run(arguments: ["SAVE10"])
        #expect(host.validate().passed)
    }
}
