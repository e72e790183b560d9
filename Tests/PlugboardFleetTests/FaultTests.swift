import Foundation
import PlugboardFleet
import PlugboardHost
import Testing

/// The registry is untrusted transport and the set untrusted until checked:
/// each fault gets its code, and the plugins directory stays byte-identical.
extension FleetSuites {
@Suite struct FaultTests {
    /// A registry with set 1 installed from it, and set 2 published: each
    /// fault is done to set 2 and then pulled.
    struct Scene {
        let registry: RegistryServer
        let work: Folder
        let publisher: Publisher
        let reference: String
        let plugins: String
        let set2: String

        init() throws {
            registry = try RegistryServer()
            work = try Folder()
            publisher = try Publisher(work)
            reference = "\(registry.address)/plugins/checkout:stable"
            plugins = work.sub("host/plugins")
            let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
            set2 = try publisher.set("set2", plugins: ["Alpha", "Beta"], sequence: 2)
            #expect(try Fleet.run(["publish", set1, reference]).status == 0)
            let pulled = try pull()
            try #require(pulled.status == 0, "\(pulled.stdout)\(pulled.stderr)")
        }

        func pull(_ extra: [String] = [], reference: String? = nil, shell: String? = nil) throws -> Fleet.Result {
            try Fleet.run(["pull", reference ?? self.reference, "--plugins", plugins, "--trusted-key", publisher.publicKey,
                           "--cache", work.sub("state"), "--sequence-floor", "1", "--json"] + extra, shell: shell)
        }

        /// Publishes `directory`; the digest of the blob of `file` in it.
        @discardableResult
        func publish(_ directory: String, extra: [String] = []) throws -> Fleet.Result {
            let published = try Fleet.run(["publish", directory, reference, "--json"] + extra)
            try #require(published.status == 0, "\(published.stdout)\(published.stderr)")
            return published
        }

        func blobDigest(_ file: String, in directory: String) throws -> String {
            Digest.of(try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))))
        }

        /// Pulls and expects `code`, DIR unchanged and no staging left beside it.
        func expectRefused(_ code: String, _ extra: [String] = [], shell: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let before = snapshot(plugins)
            let result = try pull(extra, shell: shell)
            #expect(result.status == 1 && result.code == code, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
            #expect(snapshot(plugins) == before, "the plugins directory changed", sourceLocation: sourceLocation)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.sub("host")).filter { $0.contains("staging") }
            #expect(leftovers.isEmpty, "\(leftovers)", sourceLocation: sourceLocation)
        }
    }

    @Test func aBlobWithOtherBytesIsRefused() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        let blob = scene.registry.blobFile(try scene.blobDigest("libBeta.so", in: scene.set2))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: blob))
        bytes[100] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: blob))
        try scene.expectRefused("blob-digest-mismatch")
    }

    @Test func aTruncatedBlobIsRefused() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        let blob = scene.registry.blobFile(try scene.blobDigest("libBeta.so", in: scene.set2))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: blob))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: blob))
        try scene.expectRefused("blob-digest-mismatch")
    }

    @Test func aBlobTheRegistryCannotReadIsARegistryError() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        let blob = scene.registry.blobFile(try scene.blobDigest("libBeta.so", in: scene.set2))
        // A folder where the data file was: the registry answers 500.
        try FileManager.default.removeItem(atPath: blob)
        try FileManager.default.createDirectory(atPath: blob, withIntermediateDirectories: false)
        try scene.expectRefused("registry-error")
    }

    @Test func aManifestChangedInTheRegistryIsRefused() throws {
        let scene = try Scene()
        let published = try scene.publish(scene.set2)
        // The index as stored, one byte changed: the registry serves bytes
        // that no longer have the digest they are served by.
        let digest = try #require(published.json["digest"] as? String)
        let stored = scene.registry.blobFile(digest)
        var text = try String(contentsOfFile: stored, encoding: .utf8)
        text = text.replacingOccurrences(of: "linux", with: "LINUX")
        try text.write(toFile: stored, atomically: false, encoding: .utf8)
        try scene.expectRefused("manifest-invalid")
    }

    @Test func aSetWhoseFilesAreNotItsSignedLockIsRefused() throws {
        let scene = try Scene()
        // Set 2's files under set 1's signed lock file, pushed past publish's own check.
        let client = RegistryClient(try Reference.parse(scene.reference).get())
        var files = try SetFiles.read(scene.set2).filter { !$0.title.hasPrefix("plugboard.lock") }
        files += try SetFiles.read(scene.work.sub("set1")).filter { $0.title.hasPrefix("plugboard.lock") }
        _ = try SetPublisher.publish([.init(directory: scene.set2, platform: .current, files: files)], to: client)
        try scene.expectRefused("set-mismatch")
    }

    @Test func anUnsignedSetIsRefused() throws {
        let scene = try Scene()
        try FileManager.default.removeItem(atPath: scene.set2 + "/plugboard.lock.minisig")
        try scene.publish(scene.set2, extra: ["--allow-unsigned"])
        try scene.expectRefused("set-unsigned")
        let said = try scene.pull()
        #expect((said.json["reason"] as? String)?.hasSuffix("has no signature (plugboard.lock.minisig)") == true, "what is missing, exactly: \(said.stdout)")
    }

    @Test func anExpiredSetIsRefused() throws {
        let scene = try Scene()
        try scene.publisher.resign(scene.set2, sequence: 2, expires: Date(timeIntervalSinceNow: -3600))
        try scene.publish(scene.set2)
        try scene.expectRefused("lock-expired")
    }

    @Test func aSetForAnotherChannelIsRefused() throws {
        let scene = try Scene()
        let canary = try scene.publisher.set("canary", plugins: ["Beta"], sequence: 2, channel: "canary")
        try scene.publish(canary)
        try scene.expectRefused("lock-channel", ["--channel", "stable"])
    }

    @Test func aSetSignedByAnUntrustedKeyIsRefused() throws {
        let scene = try Scene()
        let stranger = try Publisher(try Folder())
        try scene.publish(try stranger.set("stranger", plugins: ["Beta"], sequence: 9))
        try scene.expectRefused("key-unknown")
    }

    @Test func aRegistryThatIsDownIsUnreachable() throws {
        let scene = try Scene()
        scene.registry.stop()
        try scene.expectRefused("registry-unreachable")
    }

    @Test func aTagThatDoesNotExistIsNotFound() throws {
        let scene = try Scene()
        let before = snapshot(scene.plugins)
        let result = try scene.pull(reference: "\(scene.registry.address)/plugins/checkout:nothing")
        #expect(result.status == 1 && result.code == "reference-not-found", "\(result.stdout)")
        #expect(snapshot(scene.plugins) == before)
    }

    /// The disk filling while the set downloads: a file size limit (the
    /// signal ignored, so writes fail with EFBIG as on a full disk).
    @Test func aFullDiskWhileDownloadingChangesNothing() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        try scene.expectRefused("install-failed", shell: "trap '' XFSZ; ulimit -f 100;")
    }

    /// A layer declared larger than its signed size (10 GiB for a file of
    /// a few hundred KB) is refused before a byte of it is fetched: the
    /// registry serving it without end never gets a request for it.
    @Test(arguments: [10 << 30, 1 << 39])
    func aLayerDeclaredOtherThanItsSignedSizeIsRefusedBeforeFetching(declared: Int) throws {
        let scene = try Scene()
        let published = try scene.publish(scene.set2)
        let beta = try scene.blobDigest("libBeta.so", in: scene.set2)
        let front = try FaultProxy(upstream: scene.registry.port) { method, path in
            method == "GET" && path.hasSuffix(beta) ? .endless : .forward
        }
        defer { front.stop() }
        let client = RegistryClient(try Reference.parse(scene.reference).get())
        let index = try JSONDecoder().decode(ImageIndex.self, from: Data(try client.manifest(try #require(published.json["digest"] as? String)).bytes))
        let entry = try #require(index.manifests.first)
        var manifest = try JSONDecoder().decode(ImageManifest.self, from: Data(try client.manifest(entry.digest).bytes))
        let layer = try #require(manifest.layers.firstIndex { $0.title == "libBeta.so" })
        manifest.layers[layer].size = declared
        let bytes = OCIJSON.encode(manifest)
        try client.putManifest(bytes, mediaType: MediaType.manifest, as: Digest.of(bytes))
        let grown = OCIJSON.encode(ImageIndex(artifactType: MediaType.pluginSet, manifests: [Descriptor(mediaType: MediaType.manifest, digest: Digest.of(bytes), size: bytes.count, platform: .current)]))
        try client.putManifest(grown, mediaType: MediaType.index, as: "stable")
        let before = snapshot(scene.plugins)
        let result = try scene.pull(reference: "\(front.address)/plugins/checkout:stable")
        #expect(result.status == 1 && result.code == "set-mismatch", "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("its signed lock file says"), "\(result.stdout)")
        #expect(snapshot(scene.plugins) == before)
        #expect(!front.requests.withLock { $0 }.contains { $0.contains(beta) }, "the layer was requested")
    }

    /// The record of the accepted sequence cannot be written: nothing is
    /// installed (a set in place with its record below it could be replayed over).
    @Test func anUnwritableRecordInstallsNothing() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        // The records set 1 left, readable but not writable: root ignores
        // modes, so as root the folder is made immutable (chattr +i).
        let records = scene.work.sub("state/signed-locks")
        try #require(FileManager.default.fileExists(atPath: records))
        if geteuid() == 0 {
            try #require(try Fleet.command("/usr/bin/chattr", ["+i", records]) == 0, "chattr +i (e2fsprogs) on \(records)")
        } else {
            chmod(records, 0o555)
        }
        defer { if geteuid() == 0 { _ = try? Fleet.command("/usr/bin/chattr", ["-i", records]) } else { chmod(records, 0o755) } }
        try scene.expectRefused("sequence-record-unwritable")
    }

    /// Killed after raising the record and before the switch: DIR holds the
    /// old set, the record the new one's sequence. The next pull of the same
    /// set is no reuse of that sequence (the record names its lock file) and
    /// completes.
    @Test func aPullKilledAfterItsRecordCompletesNextTime() throws {
        let scene = try Scene()
        try scene.publish(scene.set2)
        let check = try #require(try SignatureCheck.required(trustedKeyFiles: [scene.publisher.publicKey], channel: nil, floor: nil, cache: scene.work.sub("state")).get().check)
        let lock = try [UInt8](Data(contentsOf: URL(fileURLWithPath: scene.set2 + "/plugboard.lock")))
        let signature = try String(contentsOfFile: scene.set2 + "/plugboard.lock.minisig", encoding: .utf8)
        let lockFile = scene.plugins + "/plugboard.lock"
        let signed = try check.verify(lock, signature: signature, signatureFile: "plugboard.lock.minisig", recordedAs: lockFile).get()
        #expect(check.accept(signed, lockFile: lockFile, lockSHA256: SHA256.hex(lock)) == nil)
        let completed = try scene.pull()
        #expect(completed.status == 0 && completed.json["outcome"] as? String == "installed", "\(completed.stdout)")
        #expect(snapshot(scene.plugins) == snapshot(scene.set2).filter { !$0.key.hasPrefix("lib/") })
    }

    /// DIR named through a link: the record has one name before the first
    /// install and after, so a pull by the real path finds it.
    @Test func aPluginsDirectoryNamedThroughALinkKeepsOneRecord() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let reference = "\(registry.address)/plugins/checkout:stable"
        #expect(try Fleet.run(["publish", try publisher.set("set1", plugins: ["Alpha"], sequence: 1), reference]).status == 0)
        try FileManager.default.createDirectory(atPath: work.sub("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work.sub("linked"), withDestinationPath: work.sub("real"))
        let trust = ["--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--json"]
        let first = try Fleet.run(["pull", reference, "--plugins", work.sub("linked/plugins"), "--sequence-floor", "1"] + trust)
        #expect(first.status == 0 && first.json["outcome"] as? String == "installed", "\(first.stdout)")
        let again = try Fleet.run(["pull", reference, "--plugins", work.sub("real/plugins")] + trust)
        #expect(again.status == 0 && again.json["outcome"] as? String == "unchanged", "the record is found without a floor: \(again.stdout)")
    }
}
}
