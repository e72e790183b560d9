import Foundation
import Plugboard
import PlugboardHost
import Testing

/// What happens to the plugins that build on one that is reloaded or
/// quarantined while the host runs: real fixtures, real reloads, a real
/// isolated child that crashes.
@Suite struct DependencyCascadeTests {
    let base = "fixture.dep.base"
    let counter = "fixture.dep.counter"
    let counterTop = "fixture.dep.counter-top"

    /// A host with `fixtures` in its plugins folder, all active, and each
    /// named build of `fixture.dep.base` copied beside the folder.
    func host(_ fixtures: [String], builds: [String] = [], isolated: Bool = false) throws -> (PluginHost, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (index, name) in fixtures.enumerated() { _ = try dir.copy(Fixtures.library(name), as: "plugins/\(index)-\(name).so") }
        for name in builds { _ = try dir.copy(Fixtures.library(name), as: "\(name).so") }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: dir.file("plugins"), dataDirectory: dir.file("data"), cacheDirectory: dir.file("cache"))
        if isolated { configuration.isolation.others = .isolated }
        let host = PluginHost(configuration: configuration)
        host.declare(Commands.self)
        try host.start()
        host.activateAll()
        return (host, dir)
    }

    func run(_ host: PluginHost, _ name: String) throws -> String {
        guard let command = host.registry.providers(of: Commands.self).first(where: { $0.name == name }) else { return "no command \(name)" }
        return try command.run(arguments: [])
    }

    func record(_ host: PluginHost, _ id: String) -> PluginRecord? { host.records.last { $0.id == id } }

    /// A patch release of the base: the plan (a dry run that changes
    /// nothing), then the reload stops the two dependents newest first,
    /// switches, and starts them again on it with their counts; in
    /// process, and with every plugin in a child of its own.
    @Test(arguments: [false, true]) func aReloadStopsItsDependentsAndStartsThemAgainWithTheirState(isolated: Bool) throws {
        let (host, dir) = try host(["DepCounterTop", "DepCounter", "DepBase"], builds: ["DepBasePatch"], isolated: isolated)
        defer { host.shutdown() }
        #expect(host.activePluginIDs == [base, counter, counterTop])
        #expect(try run(host, "counter") == "counter 1")
        #expect(try run(host, "counter") == "counter 2")
        #expect(try run(host, "counter-top") == "counter-top 1")

        let plan = host.planReload(base, from: dir.file("DepBasePatch.so"))
        #expect(plan.rejection == nil)
        #expect(plan.currentVersion == "1.2.0")
        #expect(plan.newVersion == "1.2.1")
        #expect(plan.stops == [counterTop, counter])
        #expect(plan.restarts == [counter, counterTop])
        #expect(plan.refusals.isEmpty)
        #expect(plan.steps.first == "stop \(counterTop)")
        // The dry run changed nothing.
        #expect(record(host, counter)?.generation == 1)
        #expect(try run(host, "counter") == "counter 3")

        var shown: ReloadPlan?
        let outcome = host.reload(base, from: dir.file("DepBasePatch.so")) { shown = $0 }
        #expect(outcome.result == .reloaded)
        #expect(shown == plan)
        #expect(outcome.plan == plan)
        #expect(outcome.dependents.map(\.pluginID) == [counter, counterTop])
        for dependent in outcome.dependents {
            #expect(dependent.generation == 2)
            #expect(dependent.stateNote == "state handed over")
            #expect(dependent.error == nil)
        }
        #expect(host.activePluginIDs == [base, counter, counterTop])
        #expect(try run(host, "base-patch") == "base-patch")
        #expect(try run(host, "counter") == "counter 4")
        #expect(try run(host, "counter-top") == "counter-top 2")
        #expect(record(host, counter)?.generation == 2)
        #expect(record(host, base)?.version?.description == "1.2.1")
    }

    /// A major release breaks the counter's range "1.2.0": it stays
    /// stopped with dependency-version, and the plugin on top of it with
    /// dependency-rejected; the base itself is reloaded.
    @Test func aMajorReleaseStopsTheDependentsWhoseRangeItBreaks() throws {
        let (host, dir) = try host(["DepCounterTop", "DepCounter", "DepBase"], builds: ["DepBaseMajor"])
        defer { host.shutdown() }
        let plan = host.planReload(base, from: dir.file("DepBaseMajor.so"))
        #expect(plan.restarts.isEmpty)
        #expect(plan.refusals.map(\.pluginID) == [counter, counterTop])
        #expect(plan.refusals.map(\.error.code) == [.dependencyVersion, .dependencyRejected])

        let outcome = host.reload(base, from: dir.file("DepBaseMajor.so"))
        #expect(outcome.result == .reloaded)
        #expect(outcome.dependents.map { $0.error?.code } == [.dependencyVersion, .dependencyRejected])
        #expect(host.activePluginIDs == [base])
        #expect(try run(host, "base-major") == "base-major")
        #expect(record(host, counter)?.code == "dependency-version")
        #expect(record(host, counter)?.reason?.contains("requires fixture.dep.base 1.2.0, found 2.0.0") == true)
        #expect(record(host, counterTop)?.code == "dependency-rejected")
        #expect(try run(host, "counter") == "no command counter")
    }

    /// The new base throws in activate: rolled back, the old base runs on,
    /// and its dependents start again on it with their state.
    @Test func aFailingReloadRollsBackAndTheDependentsRunOnTheOldGeneration() throws {
        let (host, dir) = try host(["DepCounter", "DepBase"], builds: ["DepBaseBroken"])
        defer { host.shutdown() }
        #expect(try run(host, "counter") == "counter 1")
        let outcome = host.reload(base, from: dir.file("DepBaseBroken.so"))
        #expect(outcome.error?.code == .activateFailed)
        #expect(outcome.generation == 1)
        #expect(outcome.dependents.map(\.pluginID) == [counter])
        #expect(outcome.dependents.first?.stateNote == "state handed over")
        #expect(host.activePluginIDs == [base, counter])
        #expect(try run(host, "base") == "base")
        #expect(try run(host, "counter") == "counter 2")
        #expect(record(host, base)?.version?.description == "1.2.0")
    }

    /// A dependent that throws when it starts again on the new base rolls
    /// back the whole cascade: the old base, and every dependent on it
    /// with its state.
    @Test func aDependentFailingToStartAgainRollsBackTheWholeCascade() throws {
        let (host, dir) = try host(["DepFlaky", "DepCounter", "DepBase"], builds: ["DepBasePatch"])
        defer { host.shutdown() }
        #expect(try run(host, "counter") == "counter 1")
        #expect(try run(host, "flaky") == "flaky 1")
        let outcome = host.reload(base, from: dir.file("DepBasePatch.so"))
        guard case let .rolledBack(error) = outcome.result else {
            Issue.record("expected a rollback, got \(outcome.result)")
            return
        }
        #expect(error.code == .activateFailed)
        #expect(error.reason.contains("flaky fails its activation number 2"))
        #expect(outcome.generation == 1)
        #expect(outcome.dependents.map(\.error) == [nil, nil])
        #expect(Set(host.activePluginIDs) == [base, counter, "fixture.dep.flaky"])
        #expect(try run(host, "base") == "base")
        #expect(try run(host, "counter") == "counter 2")
        #expect(try run(host, "flaky") == "flaky 2")
    }

    /// A build the checks refuse: the plan says so, and nothing stops.
    @Test func aRefusedBuildPlansNothingAndStopsNothing() throws {
        let (host, dir) = try host(["DepCounter", "DepBase"], builds: ["DepMiddle"])
        defer { host.shutdown() }
        let plan = host.planReload(base, from: dir.file("DepMiddle.so"))
        #expect(plan.rejection?.code == .reloadIDMismatch)
        #expect(plan.stops.isEmpty)
        let outcome = host.reload(base, from: dir.file("DepMiddle.so"))
        #expect(outcome.error?.code == .reloadIDMismatch)
        #expect(outcome.dependents.isEmpty)
        #expect(host.activePluginIDs == [base, counter])
    }

    /// An isolated dependency over its restart budget: the plugin that
    /// requires it stops with dependency-quarantined, charged nothing; the
    /// one that requires it optionally keeps running and hears of it.
    @Test func aQuarantinedDependencyStopsItsDependentsAndTellsTheOptionalOnes() throws {
        let dir = try TemporaryDirectory()
        let host = try faultsHost(in: dir, ["DepOnFaultsOptional", "DepOnFaults", "IsolationFaults"], crashes: 1)
        defer { host.shutdown() }
        #expect(host.activePluginIDs == ["fixture.isolation-faults", "fixture.dep.on-faults-optional", "fixture.dep.on-faults"])
        #expect(try run(host, "on-faults-optional") == "nothing")
        let fault = try #require(host.registry.providers(of: Commands.self).first { $0.name == "fault" })
        for _ in 0..<2 { #expect(throws: IsolatedCallError.self) { try fault.run(arguments: ["segv"]) } }

        #expect(record(host, "fixture.isolation-faults")?.code == "isolated-crash-loop")
        let stopped = try #require(record(host, "fixture.dep.on-faults"))
        #expect(stopped.code == "dependency-quarantined")
        #expect(stopped.status != .quarantined)
        #expect(stopped.quarantine == nil)
        #expect(stopped.reason?.contains("requires plugin fixture.isolation-faults, which is quarantined (isolated-crash-loop)") == true)
        #expect(host.activePluginIDs == ["fixture.dep.on-faults-optional"])
        let heard = try run(host, "on-faults-optional")
        // Every plugin that stopped is announced, the dependents stopped in turn too.
        #expect(heard == "fixture.isolation-faults isolated-crash-loop, fixture.dep.on-faults dependency-quarantined")
    }
}
