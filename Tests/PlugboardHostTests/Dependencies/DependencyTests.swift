import Foundation
import Plugboard
import PlugboardHost
import Synchronization
import Testing

/// Plugins that build on plugins: requirements read from the descriptor
/// (in the scanner), resolved before any plugin code runs, and activated in
/// dependency order. Real fixtures built by SwiftPM.
@Suite struct DependencyTests {
    func host(_ fixtures: [String]) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Numbered in the order given: file-name order is not dependency order.
        for (index, name) in fixtures.enumerated() { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(index)-\(name).so") }
        let host = PluginHost(configuration: .with(pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache")))
        host.declare(Commands.self)
        try host.start()
        return (host, dir)
    }

    func codes(_ host: PluginHost) -> [String: String] {
        Dictionary(uniqueKeysWithValues: host.records.compactMap { record in record.id.map { ($0, record.code ?? record.status.rawValue) } })
    }

    @Test func aChainIsAvailableAndActivatesInDependencyOrder() throws {
        let (host, _) = try host(["DepTop", "DepMiddle", "DepBase"])
        defer { host.shutdown() }
        #expect(codes(host) == ["fixture.dep.top": "available", "fixture.dep.middle": "available", "fixture.dep.base": "available"])
        let top = try #require(host.records.first { $0.id == "fixture.dep.top" })
        #expect(top.requires == [PluginDependency(id: "fixture.dep.middle", range: "~1.0", optional: false)])
        // Activating the top pulls what it requires, first.
        host.activate(pluginIDs: ["fixture.dep.top"])
        #expect(host.activePluginIDs == ["fixture.dep.base", "fixture.dep.middle", "fixture.dep.top"])
    }

    /// Eight threads look up the top plugin's point at once, released by one
    /// barrier: its chain activates once, in dependency order.
    @Test func concurrentActivationThroughADependencyActivatesEachOnce() throws {
        let (host, _) = try host(["DepTop", "DepMiddle", "DepBase"])
        defer { host.shutdown() }
        let barrier = try EventPipe()
        let done = DispatchGroup()
        let counts = Mutex<[Int]>([])
        for _ in 0..<8 {
            done.enter()
            Thread {
                defer { done.leave() }
                barrier.wait()
                let count = host.registry.providers(of: Commands.self).count
                counts.withLock { $0.append(count) }
            }.start()
        }
        barrier.signal(count: 8)
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(counts.withLock { $0 } == Array(repeating: 3, count: 8))
        #expect(host.activePluginIDs == ["fixture.dep.base", "fixture.dep.middle", "fixture.dep.top"])
    }

    /// A diamond: both sides require the base; it activates once, first,
    /// then the sides, then the top.
    @Test func aDiamondActivatesTheSharedDependencyOnceAndFirst() throws {
        let (host, _) = try host(["DepDiamondTop", "DepDiamondRight", "DepDiamondLeft", "DepBase"])
        defer { host.shutdown() }
        #expect(Set(codes(host).values) == ["available"])
        #expect(host.activationOrder() == ["fixture.dep.base", "fixture.dep.diamond-right", "fixture.dep.diamond-left", "fixture.dep.diamond-top"])
        host.activate(pluginIDs: ["fixture.dep.diamond-top"])
        #expect(host.activePluginIDs == ["fixture.dep.base", "fixture.dep.diamond-right", "fixture.dep.diamond-left", "fixture.dep.diamond-top"])
    }

    /// A cycle of three: every member refused, the cycle printed from its smallest id.
    @Test func aCycleOfThreeRefusesEveryMember() throws {
        let (host, _) = try host(["DepCycle3C", "DepCycle3A", "DepCycle3B", "DepBase"])
        defer { host.shutdown() }
        let found = codes(host)
        #expect(found["fixture.dep.base"] == "available")
        for id in ["fixture.dep.cycle3-a", "fixture.dep.cycle3-b", "fixture.dep.cycle3-c"] { #expect(found[id] == "dependency-cycle") }
        let reason = host.records.first { $0.id == "fixture.dep.cycle3-b" }?.reason ?? ""
        #expect(reason.contains("fixture.dep.cycle3-a → fixture.dep.cycle3-b → fixture.dep.cycle3-c → fixture.dep.cycle3-a"))
    }

    /// A plugin asks whether its optional dependencies are there; the one
    /// installed is activated first, in process and isolated alike.
    @Test(arguments: [false, true]) func aPluginAsksWhetherAnOptionalDependencyIsThere(isolated: Bool) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (index, name) in ["DepAsker", "DepBase"].enumerated() { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(index)-\(name).so") }
        var configuration = PluginHost.Configuration.with(pluginsDirectory: dir.file("plugins"), cacheDirectory: dir.file("cache"))
        if isolated { configuration.isolation.plugins["fixture.dep.asker"] = .isolated }
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        try host.start()
        defer { host.shutdown() }
        host.activate(pluginIDs: ["fixture.dep.asker"])
        #expect(host.activePluginIDs == ["fixture.dep.base", "fixture.dep.asker"])
        let asker = try #require(host.registry.providers(of: Commands.self).first { $0.name == "found" })
        #expect(try asker.run(arguments: []) == "base:true absent:false")
    }

    @Test func eachProblemHasItsOwnCode() throws {
        let (host, _) = try host(["DepBase", "DepNeedsNewer", "DepMissing", "DepBadRange", "DepCycleA", "DepCycleB", "DepOnRejected", "DepOptional"])
        defer { host.shutdown() }
        let found = codes(host)
        #expect(found["fixture.dep.base"] == "available")
        #expect(found["fixture.dep.needs-newer"] == "dependency-version")
        #expect(found["fixture.dep.missing"] == "dependency-missing")
        #expect(found["fixture.dep.cycle-a"] == "dependency-cycle")
        #expect(found["fixture.dep.cycle-b"] == "dependency-cycle")
        #expect(found["fixture.dep.on-rejected"] == "dependency-rejected")
        // A missing optional dependency is not a problem.
        #expect(found["fixture.dep.optional"] == "available")
        let records = host.records
        func reason(_ id: String) -> String { records.first { $0.id == id }?.reason ?? "" }
        #expect(reason("fixture.dep.needs-newer").contains("requires fixture.dep.base 1.3.0, found 1.2.0"))
        #expect(reason("fixture.dep.cycle-a").contains("fixture.dep.cycle-a → fixture.dep.cycle-b → fixture.dep.cycle-a"))
        #expect(reason("fixture.dep.on-rejected").contains("fixture.dep.needs-newer, which is rejected"))
        // A bad range is refused when the descriptor is read (no id is known then).
        let bad = try #require(records.first { $0.path.hasSuffix("DepBadRange.so") })
        #expect(bad.code == "dependency-range-invalid")
        #expect(bad.reason?.contains("'latest', which is not a range") == true)
    }

    @Test func aDisabledOrQuarantinedDependencyNamesItsState() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["DepBase", "DepMiddle"] { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(name).so") }
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.file("plugins"), disabledPlugins: ["fixture.dep.base": "the test"], cacheDirectory: dir.file("cache")))
        host.declare(Commands.self)
        try host.start()
        defer { host.shutdown() }
        #expect(codes(host)["fixture.dep.middle"] == "dependency-disabled")
    }

    /// `plugboard deps`: the tree, the order, JSON, dot, and its exit status.
    @Test func depsPrintsTheTreeAndTheOrder() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["DepTop", "DepMiddle", "DepBase"] { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(name).so") }
        let options = ["--plugins", dir.file("plugins"), "--cache", dir.file("cache")]
        let text = try runProcess(Fixtures.executable("plugboard"), ["deps"] + options)
        #expect(text.status == 0)
        #expect(text.stdout.contains("requires fixture.dep.middle ~1.0: found 1.0.0, available"))
        #expect(text.stdout.contains("Activation order: fixture.dep.base, fixture.dep.middle, fixture.dep.top"))
        struct Report: Decodable { let order: [String] }
        let json = try runProcess(Fixtures.executable("plugboard"), ["deps", "--json"] + options)
        #expect(try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8)).order == ["fixture.dep.base", "fixture.dep.middle", "fixture.dep.top"])
        let dot = try runProcess(Fixtures.executable("plugboard"), ["deps", "--dot"] + options)
        #expect(dot.stdout.hasPrefix("digraph plugins {"))
        #expect(dot.stdout.contains(#""fixture.dep.top" -> "fixture.dep.middle" [label="~1.0"];"#))
        _ = try dir.copy(Fixtures.library("DepMissing"), as: "plugins/DepMissing.so")
        let blocked = try runProcess(Fixtures.executable("plugboard"), ["deps"] + options)
        #expect(blocked.status == 1)
        #expect(blocked.stdout.contains("[dependency-missing]"))
        // list says what each plugin waits for, or why it cannot start.
        let list = try runProcess(Fixtures.executable("plugboard"), ["list"] + options)
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("fixture.dep.top") && $0.contains("waits for fixture.dep.middle") })
        #expect(lines.contains { $0.contains("fixture.dep.missing") && $0.contains("rejected: dependency-missing") })
        #expect(lines.contains { $0.contains("DEPENDS") })
        #expect(try runProcess(Fixtures.executable("plugboard"), ["deps", "--json", "--dot"] + options).status == 64)
    }

    @Test func versionRangesAsSwiftDevelopersKnowThem() {
        func accepts(_ range: String, _ version: String) -> Bool? {
            VersionRange(range).map { $0.contains(SemanticVersion(version)!) }
        }
        #expect(accepts("1.2.0", "1.2.0") == true)
        #expect(accepts("1.2.0", "1.9.3") == true)  // a minor or patch release meets it
        #expect(accepts("1.2.0", "2.0.0") == false)  // a major one breaks it
        #expect(accepts("1.2.0", "1.1.9") == false)
        #expect(accepts("0.3.0", "0.4.0") == false)  // 0.y: within the minor
        #expect(accepts("=1.2.3", "1.2.3") == true)
        #expect(accepts("=1.2.3", "1.2.4") == false)
        #expect(accepts(">=1.2.0 <3.0.0", "2.9.9") == true)
        #expect(accepts(">=1.2.0 <3.0.0", "3.0.0") == false)
        #expect(accepts("~1.2", "1.2.9") == true)
        #expect(accepts("~1.2", "1.3.0") == false)
        for bad in ["latest", "1", ">1.0.0", "<=2.0.0", ">=2.0.0 <1.0.0", "~", "=", "1.2.x", ""] {
            #expect(VersionRange(bad) == nil, "\(bad)")
        }
    }
}
