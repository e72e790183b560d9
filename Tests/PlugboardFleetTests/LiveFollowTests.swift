import Foundation
import Plugboard
import PlugboardHost
import Synchronization
import Testing

/// A running host that requires signatures and watches its plugins
/// directory, with `plugboard follow` installing into it: a set published
/// to the tag is live in the host without a restart.
extension FleetSuites {
@Suite struct LiveFollowTests {
    @Test func aPublishedSetGoesLiveInARunningHost() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let reference = "\(registry.address)/plugins/checkout:stable"
        let plugins = work.sub("host/plugins")
        let state = work.sub("state")
        let follow = ["follow", reference, "--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", state, "--sequence-floor", "1", "--once", "--json"]
        #expect(try Fleet.run(["publish", try publisher.set("set1", plugins: ["Alpha"], sequence: 1), reference]).status == 0)
        let first = try Fleet.run(follow)
        try #require(first.status == 0, "\(first.stdout)\(first.stderr)")

        let refreshed = DispatchSemaphore(value: 0)
        let reports = Mutex<[String]>([])
        var configuration = PluginHost.Configuration.with(pluginsDirectory: plugins, dataDirectory: work.sub("data"), cacheDirectory: state)
        configuration.trust.requiresSignatures = true
        configuration.trust.trustedKeyFiles = [publisher.publicKey]
        configuration.watching.pluginsDirectory = true
        configuration.observability.diagnosticSink = { diagnostic in
            guard diagnostic.code == "plugins-refreshed" else { return }
            reports.withLock { $0.append(diagnostic.message) }
            refreshed.signal()
        }
        let host = PluginHost(configuration: configuration)
        defer { host.shutdown() }
        host.declare(Commands.self)
        try host.start()
        #expect(host.signedLock?.sequence == 1)
        #expect(Set(host.registry.providers(of: Commands.self).map(\.name)) == ["alpha"])

        // Publish set 2, then one check by the follower: the host sees the switch by itself.
        let set2 = try publisher.set("set2", plugins: ["Alpha", "Beta"], sequence: 2)
        let clock = ContinuousClock.now
        #expect(try Fleet.run(["publish", set2, reference]).status == 0)
        let second = try Fleet.run(follow)
        #expect(second.json["decision"] as? String == "installed", "\(second.stdout)\(second.stderr)")
        // A bound for a broken watch, not a timing: the refresh signals.
        #expect(refreshed.wait(timeout: .now() + 120) == .success, "no refresh after the set was switched in")
        let live = ContinuousClock.now - clock
        #expect(Set(host.registry.providers(of: Commands.self).map(\.name)) == ["alpha", "beta"], "\(reports.withLock { $0 })")
        #expect(host.signedLock?.sequence == 2)
        // Reported, not asserted: publish (a process), one follow check (a process), the host's refresh.
        print("fleet: publish-to-live \(live) (publish, follow --once, the host's refresh of the switched set)")
    }

    /// The records of accepted sequences in a folder of their own
    /// (`--sequence-records`, `trust.sequenceRecords`), apart from the
    /// state directories: a host with no floor starts on what `follow`
    /// recorded there, and refuses the same set without the records.
    @Test func hostsReadTheRecordsFollowKeepsInTheConfiguredFolder() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let reference = "\(registry.address)/plugins/checkout:stable"
        let plugins = work.sub("host/plugins")
        #expect(try Fleet.run(["publish", try publisher.set("set1", plugins: ["Alpha"], sequence: 1), reference]).status == 0)
        let followed = try Fleet.run(["follow", reference, "--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", work.sub("follower-state"),
                                      "--sequence-records", work.sub("records"), "--sequence-floor", "1", "--once", "--json"])
        try #require(followed.status == 0, "\(followed.stdout)\(followed.stderr)")

        func host(records: String) throws -> PluginHost {
            var configuration = PluginHost.Configuration.with(pluginsDirectory: plugins, dataDirectory: work.sub("data"), cacheDirectory: work.sub("host-state"))
            configuration.trust.requiresSignatures = true
            configuration.trust.trustedKeyFiles = [publisher.publicKey]
            configuration.trust.sequenceRecords = records
            let host = PluginHost(configuration: configuration)
            host.declare(Commands.self)
            try host.start()
            return host
        }
        let shared = try host(records: work.sub("records"))
        #expect(shared.signedLock?.sequence == 1 && shared.records.allSatisfy { $0.status == .available }, "\(shared.records.map { $0.code ?? "-" })")
        shared.shutdown()
        let elsewhere = try host(records: work.sub("other-records"))
        #expect(elsewhere.records.allSatisfy { $0.code == "lock-sequence-unknown" }, "\(elsewhere.records.map { $0.code ?? "-" })")
        elsewhere.shutdown()
    }
}
}
