import Foundation
import PlugboardFleet
import PlugboardHost
import Testing

/// `plugboard publish` and `pull` against a real registry: by tag and by
/// digest, blobs not sent twice, the host's signature checks before
/// anything lands, one switch.
extension FleetSuites {
@Suite struct PublishPullTests {
    @Test func aSignedSetIsPublishedOnceAndPulledByTagAndByDigest() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let reference = "\(registry.address)/plugins/checkout:stable"

        let published = try Fleet.run(["publish", set1, reference, "--json"])
        #expect(published.status == 0, "\(published.stderr)")
        let digest = try #require(published.json["digest"] as? String)
        #expect(published.json["blobsSent"] as? Int == 4, "the empty config, the .so, the lock file and its signature")
        let again = try Fleet.run(["publish", set1, reference, "--json"])
        #expect(again.json["blobsSent"] as? Int == 0 && again.json["bytesSent"] as? Int == 0 && again.json["digest"] as? String == digest, "\(again.stdout)")

        let plugins = work.sub("host/plugins")
        let trust = ["--trusted-key", publisher.publicKey, "--cache", work.sub("state")]
        // No record of an accepted sequence and no floor: refused, nothing made.
        let unknown = try Fleet.run(["pull", reference, "--plugins", plugins, "--json"] + trust)
        #expect(unknown.status == 1 && unknown.code == "lock-sequence-unknown", "\(unknown.stdout)")
        #expect(!FileManager.default.fileExists(atPath: plugins))

        let pulled = try Fleet.run(["pull", reference, "--plugins", plugins, "--sequence-floor", "1", "--json"] + trust)
        #expect(pulled.status == 0 && pulled.json["outcome"] as? String == "installed", "\(pulled.stdout)\(pulled.stderr)")
        #expect(snapshot(plugins) == snapshot(set1).filter { !$0.key.hasPrefix("lib/") })
        #expect(!FileManager.default.fileExists(atPath: plugins + "/lib"), "no lib/ for a set without libraries")
        let byDigest = try Fleet.run(["pull", "\(registry.address)/plugins/checkout@\(digest)", "--plugins", plugins, "--json"] + trust)
        #expect(byDigest.status == 0 && byDigest.json["outcome"] as? String == "unchanged", "\(byDigest.stdout)")

        // The text form: one line saying what happened.
        let text = try Fleet.run(["pull", reference, "--plugins", plugins] + trust)
        #expect(text.status == 0 && text.stdout.hasPrefix("Unchanged: \(reference)"), "\(text.stdout)")

        // An update: the plugin already installed is copied, not fetched.
        let set2 = try publisher.set("set2", plugins: ["Alpha", "Beta"], sequence: 2)
        let update = try Fleet.run(["publish", set2, reference, "--json"])
        #expect(update.json["blobsSent"] as? Int == 3, "libBeta.so, the lock file and its signature: \(update.stdout)")
        let updated = try Fleet.run(["pull", reference, "--plugins", plugins, "--json"] + trust)
        let alpha = try Data(contentsOf: URL(fileURLWithPath: set2 + "/libAlpha.so")).count
        #expect(updated.json["outcome"] as? String == "installed" && updated.json["filesReused"] as? Int == 1, "\(updated.stdout)")
        #expect(updated.json["bytesFetched"] as? Int == (updated.json["bytes"] as? Int ?? 0) - alpha)
    }

    /// Each platform is its own signed set under one index; the host's
    /// platform is picked unless another is asked for.
    @Test func theSetForThePlatformAskedForIsInstalled() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let amd64 = try publisher.set("amd64", plugins: ["Alpha"], sequence: 1)
        // Labelled arm64 (no arm64 toolchain here): what selection needs.
        let arm64 = try publisher.set("arm64", plugins: ["Beta"], sequence: 1)
        let reference = "\(registry.address)/plugins/multi:1"
        let published = try Fleet.run(["publish", amd64, reference, "--also", "\(arm64)=linux/arm64", "--json"])
        #expect(published.status == 0 && published.json["platforms"] as? [String] == ["linux/amd64", "linux/arm64"], "\(published.stdout)\(published.stderr)")

        let trust = ["--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--sequence-floor", "1", "--json"]
        let native = try Fleet.run(["pull", reference, "--plugins", work.sub("a/plugins")] + trust)
        #expect(native.json["platform"] as? String == Platform.current.description)
        #expect(FileManager.default.fileExists(atPath: work.sub("a/plugins/libAlpha.so")))
        let other = try Fleet.run(["pull", reference, "--plugins", work.sub("b/plugins"), "--platform", "linux/arm64"] + trust)
        #expect(other.status == 0 && other.json["platform"] as? String == "linux/arm64", "\(other.stdout)")
        #expect(FileManager.default.fileExists(atPath: work.sub("b/plugins/libBeta.so")))
        let missing = try Fleet.run(["pull", reference, "--plugins", work.sub("c/plugins"), "--platform", "linux/riscv64"] + trust)
        #expect(missing.status == 1 && missing.code == "platform-missing", "\(missing.stdout)")
    }

    /// What publish refuses, before the registry is touched.
    @Test func publishRefusesUnsignedAndMismatchedSets() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let reference = "\(registry.address)/plugins/refused:1"
        let unsigned = try publisher.set("unsigned", plugins: ["Alpha"], sequence: 1)
        try FileManager.default.removeItem(atPath: unsigned + "/plugboard.lock.minisig")
        let refused = try Fleet.run(["publish", unsigned, reference, "--json"])
        #expect(refused.status == 1 && refused.code == "set-unsigned", "\(refused.stdout)")
        let loud = try Fleet.run(["publish", unsigned, reference, "--allow-unsigned"])
        #expect(loud.status == 0 && loud.stderr.contains("UNSIGNED"), "\(loud.stderr)")

        let changed = try publisher.set("changed", plugins: ["Alpha"], sequence: 1)
        try FileManager.default.removeItem(atPath: changed + "/libAlpha.so")
        try FileManager.default.copyItem(atPath: try Fleet.fixture("Beta"), toPath: changed + "/libAlpha.so")
        let mismatch = try Fleet.run(["publish", changed, reference, "--json"])
        #expect(mismatch.status == 1 && mismatch.code == "set-mismatch", "\(mismatch.stdout)")

        // Not a set: no folder; no plugin; a .so that is no ELF library (platform unknown); two sets for one platform.
        let missing = try Fleet.run(["publish", work.sub("nothing"), reference, "--json"])
        #expect(missing.status == 1 && missing.code == "set-unreadable", "\(missing.stdout)")
        let empty = work.sub("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let none = try Fleet.run(["publish", empty, reference, "--allow-unsigned", "--json"])
        #expect(none.status == 1 && none.code == "set-unreadable", "\(none.stdout)")
        try Data("not an ELF file".utf8).write(to: URL(fileURLWithPath: empty + "/libText.so"))
        let unknown = try Fleet.run(["publish", empty, reference, "--allow-unsigned", "--json"])
        #expect(unknown.status == 1 && unknown.code == "platform-unknown", "\(unknown.stdout)")
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let twice = try Fleet.run(["publish", set1, reference, "--also", set1, "--json"])
        #expect(twice.status == 1 && twice.code == "platform-repeated", "\(twice.stdout)")
        let badAlso = try Fleet.run(["publish", set1, reference, "--also", "\(set1)=arm64"])
        #expect(badAlso.status == 64, "\(badAlso.stderr)")

        let usage = try Fleet.run(["publish", changed])
        #expect(usage.status == 64)
        let badReference = try Fleet.run(["publish", changed, "not a reference"])
        #expect(badReference.status == 64 && badReference.stderr.contains("HOST[:PORT]/REPOSITORY"), "\(badReference.stderr)")
    }

    /// Basic authentication (htpasswd): credentials from the environment or
    /// Docker's config.json; none or wrong ones get `registry-auth-failed`.
    @Test func credentialsComeFromTheEnvironmentOrDockerConfig() throws {
        let registry = try RegistryServer(auth: .basic)
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let reference = "\(registry.address)/plugins/private:1"
        let anonymous = try Fleet.run(["publish", set1, reference, "--json"])
        #expect(anonymous.status == 1 && anonymous.code == "registry-auth-failed", "\(anonymous.stdout)")
        let wrong = try Fleet.run(["publish", set1, reference, "--json"], environment: ["PLUGBOARD_REGISTRY_USERNAME": "fleet", "PLUGBOARD_REGISTRY_PASSWORD": "wrong"])
        #expect(wrong.status == 1 && wrong.code == "registry-auth-failed", "\(wrong.stdout)")
        #expect(!wrong.stdout.contains("wrong") && !wrong.stderr.contains("wrong"), "a password is never printed")
        let right = try Fleet.run(["publish", set1, reference, "--json"], environment: ["PLUGBOARD_REGISTRY_USERNAME": "fleet", "PLUGBOARD_REGISTRY_PASSWORD": "s3cret"])
        #expect(right.status == 0, "\(right.stdout)\(right.stderr)")

        let docker = work.sub("docker")
        try FileManager.default.createDirectory(atPath: docker, withIntermediateDirectories: true)
        let auth = Data("fleet:s3cret".utf8).base64EncodedString()
        try #"{"auths": {"\#(registry.address)": {"auth": "\#(auth)"}}}"#.write(toFile: docker + "/config.json", atomically: true, encoding: .utf8)
        let pulled = try Fleet.run(["pull", reference, "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--json"], environment: ["DOCKER_CONFIG": docker])
        #expect(pulled.status == 0, "\(pulled.stdout)\(pulled.stderr)")
    }

    /// Token authentication: the registry's 401 names a token service; the
    /// tool asks it for a token with the credentials, then sends the token.
    @Test func bearerTokensComeFromTheRegistrysTokenService() throws {
        let work = try Folder()
        let issuer = try TokenIssuer(in: work, repository: "plugins/checkout")
        let basic = "Basic " + Data("fleet:s3cret".utf8).base64EncodedString()
        let tokens = try FaultProxy(upstream: 1) { _, _ in .token(authorization: basic, token: issuer.token) }
        defer { tokens.stop() }
        let registry = try RegistryServer(auth: .token(realm: "http://\(tokens.address)/token", certificate: issuer.certificate))
        let publisher = try Publisher(work)
        let reference = "\(registry.address)/plugins/checkout:stable"
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let anonymous = try Fleet.run(["publish", set1, reference, "--json"])
        #expect(anonymous.status == 1 && anonymous.code == "registry-auth-failed", "the token service refuses anonymous requests: \(anonymous.stdout)")
        let credentials = ["PLUGBOARD_REGISTRY_USERNAME": "fleet", "PLUGBOARD_REGISTRY_PASSWORD": "s3cret"]
        let published = try Fleet.run(["publish", set1, reference, "--json"], environment: credentials)
        #expect(published.status == 0, "\(published.stdout)\(published.stderr)")
        let pulled = try Fleet.run(["pull", reference, "--plugins", work.sub("host/plugins"), "--trusted-key", publisher.publicKey,
                                    "--cache", work.sub("state"), "--sequence-floor", "1", "--json"], environment: credentials)
        #expect(pulled.status == 0 && pulled.json["outcome"] as? String == "installed", "\(pulled.stdout)\(pulled.stderr)")
        #expect(tokens.heads.contains { $0.contains("scope=repository%3Aplugins%2Fcheckout%3A") }, "the scope of the challenge is asked for")
    }
}
}
