import Foundation
import PlugboardFleet
import PlugboardHost
import Testing

private func isBlobGet(_ method: String, _ path: String) -> Bool { method == "GET" && path.contains("/blobs/sha256:") }
private func digest(in path: String) -> String { "sha256:" + (path.components(separatedBy: "sha256:").last ?? "") }

/// What a registry's transport can do to a pull, through a proxy in front
/// of a real registry: redirect blobs to another host (followed, without
/// the credentials), answer without end (cut off), stall while the pull is
/// killed (nothing half-installed; the next pull completes).
extension FleetSuites {
@Suite struct TransportTests {
    @Test func blobsRedirectedToAnotherHostAreFetchedWithoutTheCredentials() throws {
        let registry = try RegistryServer(auth: .basic)
        let work = try Folder()
        let publisher = try Publisher(work)
        let credentials = ["PLUGBOARD_REGISTRY_USERNAME": "fleet", "PLUGBOARD_REGISTRY_PASSWORD": "s3cret"]
        // The "object store": another origin, serving the stored blobs to anyone.
        let storage = try FaultProxy(upstream: registry.port) { method, path in
            isBlobGet(method, path) ? .serve(file: registry.blobFile(digest(in: path))) : .forward
        }
        let front = try FaultProxy(upstream: registry.port) { method, path in
            isBlobGet(method, path) ? .redirect(origin: "http://\(storage.address)") : .forward
        }
        // Their threads hold them (and the registry their rules name) until stopped.
        defer { front.stop(); storage.stop() }
        let reference = "\(front.address)/plugins/checkout:stable"
        let published = try Fleet.run(["publish", try publisher.set("set1", plugins: ["Alpha"], sequence: 1), reference], environment: credentials)
        try #require(published.status == 0, "\(published.stdout)\(published.stderr)")
        let pulled = try Fleet.run(["pull", reference, "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--json"], environment: credentials)
        #expect(pulled.status == 0 && pulled.json["outcome"] as? String == "installed", "\(pulled.stdout)\(pulled.stderr)")
        let redirected = storage.heads
        #expect(redirected.count == 3, "the .so, the lock file and its signature came from the other host: \(redirected.count)")
        #expect(redirected.allSatisfy { !$0.lowercased().contains("authorization:") }, "credentials reached another host")
        #expect(front.heads.contains { $0.lowercased().contains("authorization: basic") }, "the registry itself got them")
    }

    @Test func aResponseWithoutEndIsCutOff() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let front = try FaultProxy(upstream: registry.port) { method, path in isBlobGet(method, path) ? .endless : .forward }
        defer { front.stop() }
        let reference = "\(front.address)/plugins/checkout:stable"
        #expect(try Fleet.run(["publish", set1, reference]).status == 0)
        let pulled = try Fleet.run(["pull", reference, "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--json"])
        #expect(pulled.status == 1 && pulled.code == "response-too-large", "\(pulled.stdout)")
        #expect(!FileManager.default.fileExists(atPath: work.sub("host/plugins")))
    }

    /// A registry that drips a blob (5 bytes a second) is cut once the
    /// transfer stayed under the minimum rate for the stall window, with
    /// its code, having read a few bytes of it; DIR is never made.
    @Test func aDrippingBlobIsCutAfterTheStallWindow() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let alpha = Digest.of(try [UInt8](Data(contentsOf: URL(fileURLWithPath: set1 + "/libAlpha.so"))))
        let front = try FaultProxy(upstream: registry.port) { method, path in
            isBlobGet(method, path) && path.hasSuffix(alpha) ? .drip(file: registry.blobFile(alpha)) : .forward
        }
        defer { front.stop() }
        let reference = "\(front.address)/plugins/checkout:stable"
        #expect(try Fleet.run(["publish", set1, reference]).status == 0)
        let pulled = try Fleet.run(["pull", reference, "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--stall-window", "2", "--json"])
        #expect(pulled.status == 1 && pulled.code == "transfer-too-slow", "\(pulled.stdout)\(pulled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.sub("host/plugins")))
    }

    @Test func aPullKilledMidwayLeavesTheOldSetWholeAndTheNextPullCompletes() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let plugins = work.sub("host/plugins")
        let trust = ["--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--sequence-floor", "1", "--json"]
        let direct = "\(registry.address)/plugins/checkout:stable"
        #expect(try Fleet.run(["publish", try publisher.set("set1", plugins: ["Alpha"], sequence: 1), direct]).status == 0)
        #expect(try Fleet.run(["pull", direct] + trust).status == 0)
        let set2 = try publisher.set("set2", plugins: ["Alpha", "Beta"], sequence: 2)
        #expect(try Fleet.run(["publish", set2, direct]).status == 0)
        let before = snapshot(plugins)

        let beta = Digest.of(try [UInt8](Data(contentsOf: URL(fileURLWithPath: set2 + "/libBeta.so"))))
        let front = try FaultProxy(upstream: registry.port) { method, path in
            isBlobGet(method, path) && path.hasSuffix(beta) ? .stall(file: registry.blobFile(beta)) : .forward
        }
        defer { front.stop() }
        let pull = Process()
        pull.executableURL = URL(fileURLWithPath: Fleet.tool)
        pull.arguments = ["pull", "\(front.address)/plugins/checkout:stable"] + trust
        pull.standardOutput = FileHandle.nullDevice
        pull.standardError = FileHandle.nullDevice
        try pull.run()
        #expect(front.stalled.wait(timeout: .now() + 120) == .success, "the pull never reached the blob")
        kill(pull.processIdentifier, SIGKILL)
        pull.waitUntilExit()
        #expect(snapshot(plugins) == before, "a killed pull changed the installed set")

        let completed = try Fleet.run(["pull", direct] + trust)
        #expect(completed.status == 0 && completed.json["outcome"] as? String == "installed", "\(completed.stdout)\(completed.stderr)")
        #expect(snapshot(plugins) == snapshot(set2).filter { !$0.key.hasPrefix("lib/") })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.sub("host")).filter { $0.contains("staging") }
        #expect(leftovers.isEmpty, "the killed pull's staging folder is removed by the next: \(leftovers)")
    }

    /// A registry that names another origin, for an upload or in a 401 from
    /// its redirect target, gets no credentials sent there.
    @Test func credentialsNeverGoToAnotherOriginTheRegistryNames() throws {
        let registry = try RegistryServer(auth: .basic)
        let work = try Folder()
        let publisher = try Publisher(work)
        let credentials = ["PLUGBOARD_REGISTRY_USERNAME": "fleet", "PLUGBOARD_REGISTRY_PASSWORD": "s3cret"]
        let elsewhere = try FaultProxy(upstream: registry.port) { _, _ in .challenge(realm: "http://127.0.0.1:1/token") }
        defer { elsewhere.stop() }
        let uploads = try FaultProxy(upstream: registry.port) { method, path in
            method == "POST" && path.contains("/blobs/uploads/") ? .uploadElsewhere(origin: "http://\(elsewhere.address)") : .forward
        }
        defer { uploads.stop() }
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let published = try Fleet.run(["publish", set1, "\(uploads.address)/plugins/checkout:1", "--json"], environment: credentials)
        #expect(published.status == 1 && published.code == "redirect-refused", "\(published.stdout)")

        #expect(try Fleet.run(["publish", set1, "\(registry.address)/plugins/checkout:1"], environment: credentials).status == 0)
        let front = try FaultProxy(upstream: registry.port) { method, path in
            isBlobGet(method, path) ? .redirect(origin: "http://\(elsewhere.address)") : .forward
        }
        defer { front.stop() }
        let pulled = try Fleet.run(["pull", "\(front.address)/plugins/checkout:1", "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--json"], environment: credentials)
        #expect(pulled.status == 1 && pulled.code == "registry-auth-failed", "\(pulled.stdout)")
        #expect(!elsewhere.heads.isEmpty && elsewhere.heads.allSatisfy { !$0.lowercased().contains("authorization:") }, "\(elsewhere.heads)")
        #expect(!FileManager.default.fileExists(atPath: work.sub("host/plugins")))
    }
}
}
