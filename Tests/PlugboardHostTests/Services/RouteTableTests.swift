import DemoInterfaces
import Foundation
import Plugboard
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
        let cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.path, cacheDirectory: cache.path))
        defer { host.shutdown() }  // also when a check throws before the shutdown below
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

    // MARK: - Against a reference matcher

    /// Deterministic pseudo-random numbers (SplitMix64), so a failure can be replayed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The matching rules written the slow, obvious way: try every pattern;
    /// of those that match, the one whose leftmost segment that differs from
    /// another's is a literal wins.
    static func referenceMatch(_ patterns: [String], _ path: String) -> (pattern: String, parameters: [String: String])? {
        let parts = path.split(separator: "/").map(String.init)
        func isCapture(_ segment: String) -> Bool { segment.hasPrefix("{") }
        let matching = patterns.filter { pattern in
            let segments = pattern.split(separator: "/").map(String.init)
            return segments.count == parts.count && zip(segments, parts).allSatisfy { isCapture($0) || $0 == $1 }
        }
        let best = matching.min { a, b in
            for (x, y) in zip(a.split(separator: "/"), b.split(separator: "/")) where isCapture(String(x)) != isCapture(String(y)) {
                return !isCapture(String(x))
            }
            return false
        }
        guard let best else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(best.split(separator: "/").map(String.init), parts) where isCapture(segment) {
            parameters[String(segment.dropFirst().dropLast())] = part
        }
        return (best, parameters)
    }

    @Test func theTrieMatchesLikeTheReferenceOnGeneratedPatternsAndPaths() throws {
        var random = SeededGenerator(state: 0x5EED)
        // More than 8 words: nodes with many literal children are searched by hash, the others by a scan.
        let words = ["a", "b", "ab", "menu", "x1", "long-segment-name", "c", "d", "e", "f", "g", "h"]
        var compared = 0, matched = 0
        for _ in 0..<150 {
            let table = RouteTable()
            var registered: [String] = []
            // Two rounds of registering then matching: a lookup after a change sees the change.
            for _ in 0..<2 {
                for _ in 0..<Int.random(in: 1...24, using: &random) {
                    let length = Int.random(in: 1...4, using: &random)
                    let segments = (0..<length).map { index in
                        Int.random(in: 0..<10, using: &random) < 3 ? "{p\(index)}" : words.randomElement(using: &random)!
                    }
                    let pattern = "/" + segments.joined(separator: "/")
                    do {
                        try table.register(pattern, owner: ServiceOwner(pluginID: "p"), handler: { _ in "" })
                        registered.append(pattern)
                    } catch {
                        // Same shape as one already registered: a conflict, as the reference never sees it.
                        #expect(error.code == .routeConflict)
                    }
                }
                for _ in 0..<30 {
                    let length = Int.random(in: 0...5, using: &random)
                    let path = "/" + (0..<length).map { _ in (words + ["zz"]).randomElement(using: &random)! }.joined(separator: "/")
                    let expected = Self.referenceMatch(registered, path)
                    let found = table.match(path)
                    #expect(found?.0.pattern == expected?.pattern, "path \(path) among \(registered)")
                    #expect(found?.1.parameters == expected?.parameters, "path \(path) among \(registered)")
                    compared += 1
                    if expected != nil { matched += 1 }
                }
            }
        }
        // The generator must produce matches, or the comparison proves little.
        #expect(matched > compared / 10, "\(matched) of \(compared) paths matched")
    }

    /// A reload's new generation registers its routes staged: lookups keep
    /// answering with the old one (also once a lookup copy of the table
    /// exists) until the switch-over, then with the new one.
    @Test func aStagedGenerationAnswersOnlyAfterTheSwitchOver() throws {
        let table = RouteTable()
        let old = ServiceOwner(pluginID: "p", generation: 1), new = ServiceOwner(pluginID: "p", generation: 2)
        try table.register("/x/{id}", owner: old, handler: { _ in "old" })
        #expect(table.match("/x/1")?.0.owner == old)
        table.stage(new)
        try table.register("/x/{id}", owner: new, handler: { _ in "new" })
        #expect(table.match("/x/1")?.0.owner == old, "a staged generation waits for its commit")
        table.switchOver(from: old, to: new)
        #expect(table.match("/x/1")?.0.owner == new)
        // Empty segments and a trailing slash are skipped, as before.
        #expect(table.match("//x//7/")?.1.parameter("id") == "7")
        #expect(table.match("/x") == nil && table.match("/x/1/2") == nil)
    }

    @Test func aCaptureIsReadByNameWithoutBuildingADictionary() throws {
        let table = RouteTable()
        try table.register("/a/{x}/b/{y}", owner: ServiceOwner(pluginID: "p"), handler: { _ in "" })
        let match = try #require(table.match("/a/1/b/2")?.1)
        #expect(match.parameter("x") == "1")
        #expect(match.parameter("y") == "2")
        #expect(match.parameter("z") == nil)
        #expect(match.parameters == ["x": "1", "y": "2"])
    }

    private func title(_ table: RouteTable, _ path: String) throws -> String? {
        (try table.navigate(to: path) as? RenderedSection)?.title
    }
}
