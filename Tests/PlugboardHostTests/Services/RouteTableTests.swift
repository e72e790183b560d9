import DemoInterfaces
import Foundation
import Plugboard
@testable import PlugboardHost
import Testing

@Suite struct RouteTableTests {
    func section(_ title: String) -> @Sendable (RouteMatch) throws -> any Sendable {
        { match in RenderedSection(title: title, lines: match.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) }
    }

    @Test func capturesAndLiteralsBeforeCaptures() throws {
        let table = RouteTable()
        try table.register("/restaurants/{id}", owner: ServiceOwner(pluginID: "p1"), handler: section("restaurant"))
        try table.register("/restaurants/new", owner: ServiceOwner(pluginID: "p2"), handler: section("new"))
        try table.register("/restaurants/{slug}/menu/{dish}", owner: ServiceOwner(pluginID: "p3"), handler: section("dish"))
        #expect(try table.navigate(to: "/restaurants/42") as? RenderedSection == RenderedSection(title: "restaurant", lines: ["id=42"]))
        #expect(try title(table, "/restaurants/new") == "new")
        #expect((try table.navigate(to: "/restaurants/7/menu/soup/") as? RenderedSection)?.lines == ["dish=soup", "slug=7"])
        let missing = expectServiceError(.routeNotFound) { _ = try table.navigate(to: "/restaurants") }
        #expect(missing?.path == "/restaurants")
        expectServiceError(.routeNotFound) { _ = try table.navigate(to: "/other/1") }
    }

    @Test func theFirstRegistrationOfAPatternWinsAndTheSecondIsAConflict() throws {
        let table = RouteTable()
        try table.register("/a/{id}", owner: ServiceOwner(pluginID: "first"), handler: section("first"))
        let conflict = expectServiceError(.routeConflict) {
            try table.register("/a/{x}", owner: ServiceOwner(pluginID: "second"), handler: section("second"))
        }
        #expect(conflict?.message.contains("already registered by first (as '/a/{id}')") == true)
        #expect(try title(table, "/a/1") == "first")
        table.removeAll(owner: ServiceOwner(pluginID: "first"))
        expectServiceError(.routeNotFound) { _ = try table.navigate(to: "/a/1") }
    }

    @Test func aNewGenerationShadowsTheOldUntilOneIsRetired() throws {
        let table = RouteTable()
        let old = ServiceOwner(pluginID: "p", generation: 1), new = ServiceOwner(pluginID: "p", generation: 2)
        try table.register("/x", owner: old, handler: section("old"))
        try table.register("/x", owner: new, handler: section("new"))
        #expect(try title(table, "/x") == "new")
        table.removeAll(owner: new)  // rollback
        #expect(try title(table, "/x") == "old")
        try table.register("/x", owner: new, handler: section("new"))
        table.removeAll(owner: old)  // commit
        #expect(try title(table, "/x") == "new")
        expectServiceError(.routeConflict) { try table.register("/x", owner: new, handler: section("again")) }
    }

    @Test(arguments: ["no-slash", "/a/{id", "/a/x{id}", "/a/{}", "/a/{id}/{id}"])
    func invalidPatternsAreRefused(_ pattern: String) {
        expectServiceError(.routeInvalidPattern) { try RouteTable().register(pattern, owner: ServiceOwner(pluginID: "p"), handler: section("x")) }
    }

    @Test func twoRealPluginsClaimingOneRouteAreReportedAndTheFirstByFileNameWins() throws {
        let dir = try TemporaryDirectory()
        try dir.copy(Fixtures.library("RouteOwnerB"), as: "a-route-b.so")
        try dir.copy(Fixtures.library("RouteOwnerA"), as: "b-route-a.so")
        let host = PluginHost(configuration: .init(pluginsDirectory: dir.path))
        try host.loadAll()
        #expect(host.records.map(\.status) == [.active, .active])
        #expect(try host.router.navigate(to: "/shared/9", as: [String].self) == ["route-b", "9"])
        #expect(try host.router.navigate(to: "/route-a", as: [String].self) == ["route-a"])
        expectServiceError(.routeDestinationType) { _ = try host.router.navigate(to: "/route-a", as: RenderedSection.self) }
        let conflict = try #require(host.diagnostics.first { $0.code == "route-conflict" })
        #expect(conflict.plugin == "fixture.route-a")
        #expect(conflict.message.contains("already registered by fixture.route-b"))
        host.shutdown()
        expectServiceError(.routeNotFound) { _ = try host.router.navigate(to: "/shared/9") }
    }

    private func title(_ table: RouteTable, _ path: String) throws -> String? {
        (try table.navigate(to: path) as? RenderedSection)?.title
    }
}
