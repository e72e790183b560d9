import Foundation
import PlugboardFleet
import PlugboardHost
import Testing

/// `plugboard follow`, `rollback`, `export` and `import` against a real
/// registry: sets 1 → 2 → 3, a replayed 2 refused, a rollback only when
/// asked for, a set carried on disk.
extension FleetSuites {
@Suite struct FollowTests {
    @Test func followInstallsEachNewerSetAndRefusesAReplayedOne() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let sets = [try publisher.set("set1", plugins: ["Alpha"], sequence: 1),
                    try publisher.set("set2", plugins: ["Alpha", "Beta"], sequence: 2),
                    try publisher.set("set3", plugins: ["Beta"], sequence: 3)]
        let reference = "\(registry.address)/plugins/checkout:stable"
        let plugins = work.sub("host/plugins")
        let follow = ["follow", reference, "--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", work.sub("state"),
                      "--sequence-floor", "1", "--once", "--json"]
        func decision(_ result: Fleet.Result) -> String? { result.json["decision"] as? String }

        for (position, set) in sets.enumerated() {
            #expect(try Fleet.run(["publish", set, reference]).status == 0)
            let installed = try Fleet.run(follow)
            #expect(installed.status == 0 && decision(installed) == "installed" && installed.json["sequence"] as? Int == position + 1, "\(installed.stdout)\(installed.stderr)")
            #expect(snapshot(plugins) == snapshot(set).filter { !$0.key.hasPrefix("lib/") }, "set \(position + 1) is what DIR holds")
            let unchanged = try Fleet.run(follow)
            #expect(unchanged.status == 0 && decision(unchanged) == "unchanged", "\(unchanged.stdout)")
        }
        // Whoever controls the registry points the tag back at set 2: refused, DIR untouched.
        #expect(try Fleet.run(["publish", sets[1], reference]).status == 0)
        let before = snapshot(plugins)
        let replayed = try Fleet.run(follow)
        #expect(replayed.status == 1 && decision(replayed) == "refused" && replayed.json["code"] as? String == "lock-rollback", "\(replayed.stdout)")
        #expect(snapshot(plugins) == before)
        let again = try Fleet.run(follow)
        #expect(decision(again) == "still-refused", "reported once, then skipped until the tag moves: \(again.stdout)")

        // A refusal this host's settings caused is not remembered: with the settings mended, the next check installs.
        let fresh = work.sub("fresh/plugins")
        let noFloor = follow.filter { $0 != "--sequence-floor" && $0 != "1" }.map { $0 == plugins ? fresh : $0 }
        let unknown = try Fleet.run(noFloor)
        #expect(decision(unknown) == "failed" && unknown.json["code"] as? String == "lock-sequence-unknown", "\(unknown.stdout)")
        let mended = try Fleet.run(noFloor + ["--sequence-floor", "1"])
        #expect(decision(mended) == "installed", "\(mended.stdout)")

        // A new set signed with the installed sequence but other files.
        let reused = try publisher.set("reused", plugins: ["Alpha"], sequence: 3)
        #expect(try Fleet.run(["publish", reused, reference]).status == 0)
        let sameSequence = try Fleet.run(follow)
        #expect(sameSequence.json["code"] as? String == "lock-sequence-reused", "\(sameSequence.stdout)")
        #expect(snapshot(plugins) == before)
    }

    /// Rollback switches back only when told to lower the record; the
    /// record it lowers is the one hosts read.
    @Test func rollbackNeedsTheExplicitFlagAndLowersTheRecord() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha"], sequence: 1)
        let set2 = try publisher.set("set2", plugins: ["Beta"], sequence: 2)
        let reference = "\(registry.address)/plugins/checkout:stable"
        let plugins = work.sub("host/plugins")
        let trust = ["--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--json"]
        let none = try Fleet.run(["rollback"] + trust)
        #expect(none.status == 1 && none.code == "no-previous-set", "\(none.stdout)")
        for set in [set1, set2] {
            #expect(try Fleet.run(["publish", set, reference]).status == 0)
            #expect(try Fleet.run(["pull", reference, "--sequence-floor", "1"] + trust).status == 0)
        }
        let refused = try Fleet.run(["rollback"] + trust)
        #expect(refused.status == 1 && refused.code == "lock-rollback", "\(refused.stdout)")
        #expect(snapshot(plugins) == snapshot(set2).filter { !$0.key.hasPrefix("lib/") })

        let rolledBack = try Fleet.run(["rollback", "--lower-sequence"] + trust)
        #expect(rolledBack.status == 0 && rolledBack.json["loweredFrom"] as? Int == 2 && rolledBack.json["sequence"] as? Int == 1, "\(rolledBack.stdout)\(rolledBack.stderr)")
        #expect(rolledBack.stderr.contains("lowered from 2 to 1"))
        #expect(snapshot(plugins) == snapshot(set1).filter { !$0.key.hasPrefix("lib/") })
        // The record hosts read now says 1.
        let check = try #require(try SignatureCheck.required(trustedKeyFiles: [publisher.publicKey], channel: nil, floor: nil, cache: work.sub("state")).get().check)
        #expect(check.lastAccepted(for: plugins + "/plugboard.lock")?.sequence == 1)
        // A second rollback goes forward again, and raises the record with it.
        let forward = try Fleet.run(["rollback"] + trust)
        #expect(forward.status == 0 && forward.json["sequence"] as? Int == 2, "\(forward.stdout)\(forward.stderr)")
        #expect(snapshot(plugins) == snapshot(set2).filter { !$0.key.hasPrefix("lib/") })
        #expect(check.lastAccepted(for: plugins + "/plugboard.lock")?.sequence == 2)
        // Down and up again, both with --lower-sequence: going up raises the record too.
        #expect(try Fleet.run(["rollback", "--lower-sequence"] + trust).json["sequence"] as? Int == 1)
        let up = try Fleet.run(["rollback", "--lower-sequence"] + trust)
        #expect(up.status == 0 && up.json["sequence"] as? Int == 2, "\(up.stdout)\(up.stderr)")
        #expect(check.lastAccepted(for: plugins + "/plugboard.lock")?.sequence == 2, "the record is not left below the set in DIR")
    }

    /// A set carried on disk: exported with every blob checked, imported
    /// with the checks of a pull; a damaged blob in the layout is refused.
    @Test func exportAndImportCarryASetWithoutARegistry() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let set1 = try publisher.set("set1", plugins: ["Alpha", "Beta"], sequence: 1)
        let reference = "\(registry.address)/plugins/checkout:stable"
        #expect(try Fleet.run(["publish", set1, reference]).status == 0)
        let layout = work.sub("layout")
        let exported = try Fleet.run(["export", reference, layout, "--json"])
        #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
        #expect(FileManager.default.fileExists(atPath: layout + "/oci-layout") && FileManager.default.fileExists(atPath: layout + "/index.json"))

        let trust = ["--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--sequence-floor", "1", "--json"]
        let imported = try Fleet.run(["import", layout, "--plugins", work.sub("a/plugins")] + trust)
        #expect(imported.status == 0 && imported.json["outcome"] as? String == "installed", "\(imported.stdout)\(imported.stderr)")
        #expect(snapshot(work.sub("a/plugins")) == snapshot(set1).filter { !$0.key.hasPrefix("lib/") })

        // Damage the largest blob (a plugin), keeping its size.
        let blobs = layout + "/blobs/sha256"
        let largest = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs).max { size(blobs + "/" + $0) < size(blobs + "/" + $1) })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: blobs + "/" + largest))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: blobs + "/" + largest))
        let damaged = try Fleet.run(["import", layout, "--plugins", work.sub("b/plugins")] + trust)
        #expect(damaged.status == 1 && damaged.code == "blob-digest-mismatch", "\(damaged.stdout)")
        #expect(!FileManager.default.fileExists(atPath: work.sub("b/plugins")))
        // A link where a layout's file should be (to something endless) is refused, not read.
        let linked = work.sub("linked")
        try FileManager.default.createDirectory(atPath: linked + "/blobs/sha256", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: linked + "/index.json", withDestinationPath: "/dev/zero")
        let link = try Fleet.run(["import", linked, "--plugins", work.sub("b/plugins")] + trust)
        #expect(link.status == 1 && link.code == "layout-invalid", "\(link.stdout)")
        let notLayout = try Fleet.run(["import", work.sub("nothing"), "--plugins", work.sub("b/plugins")] + trust)
        #expect(notLayout.status == 1 && notLayout.code == "layout-invalid", "\(notLayout.stdout)")

        // The same as one tar file; a damaged archive is refused, a hostile one too.
        let archive = work.sub("set.tar")
        let archived = try Fleet.run(["export", reference, archive, "--json"])
        #expect(archived.status == 0, "\(archived.stdout)\(archived.stderr)")
        registry.stop()
        let fromArchive = try Fleet.run(["import", archive, "--plugins", work.sub("c/plugins")] + trust)
        #expect(fromArchive.status == 0 && fromArchive.json["outcome"] as? String == "installed", "\(fromArchive.stdout)\(fromArchive.stderr)")
        #expect(snapshot(work.sub("c/plugins")) == snapshot(set1).filter { !$0.key.hasPrefix("lib/") })
        var tar = try Data(contentsOf: URL(fileURLWithPath: archive))
        // A first entry named outside the layout, its header's checksum made right again.
        tar.replaceSubrange(0..<9, with: Data("../escape".utf8))
        tar.replaceSubrange(148..<156, with: Data(repeating: 32, count: 8))
        let sum = tar.prefix(512).reduce(0) { $0 + Int($1) }
        tar.replaceSubrange(148..<156, with: Data((String(repeating: "0", count: 6 - String(sum, radix: 8).count) + String(sum, radix: 8)).utf8) + Data([0, 32]))
        try tar.write(to: URL(fileURLWithPath: work.sub("bad.tar")))
        let hostile = try Fleet.run(["import", work.sub("bad.tar"), "--plugins", work.sub("d/plugins")] + trust)
        #expect(hostile.status == 1 && hostile.code == "layout-invalid", "\(hostile.stdout)")
        try tar.prefix(tar.count / 3).write(to: URL(fileURLWithPath: work.sub("short.tar")))
        let short = try Fleet.run(["import", work.sub("short.tar"), "--plugins", work.sub("d/plugins")] + trust)
        #expect(short.status == 1 && short.code == "layout-invalid", "\(short.stdout)")
        #expect(!FileManager.default.fileExists(atPath: work.sub("d/plugins")))
    }

    private func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }

    /// Promotion: the same folder signed again for another channel with the
    /// next sequence. Only its signature differs, and it must reach DIR:
    /// a host following stable takes the promoted set.
    @Test func aPromotedSetReachesTheHostsOfTheOtherChannel() throws {
        let registry = try RegistryServer()
        let work = try Folder()
        let publisher = try Publisher(work)
        let folder = try publisher.set("release", plugins: ["Alpha", "Beta"], sequence: 1, channel: "canary")
        let plugins = work.sub("host/plugins")
        let trust = ["--plugins", plugins, "--trusted-key", publisher.publicKey, "--cache", work.sub("state"), "--sequence-floor", "1", "--json"]
        #expect(try Fleet.run(["publish", folder, "\(registry.address)/shop/plugins:canary"]).status == 0)
        #expect(try Fleet.run(["follow", "\(registry.address)/shop/plugins:canary", "--once"] + trust).json["decision"] as? String == "installed")
        let lockBefore = try Data(contentsOf: URL(fileURLWithPath: folder + "/plugboard.lock"))
        let promoted = try Fleet.run(["lock", "--plugins", folder, "--sign", publisher.key, "--sequence", "2", "--channel", "stable"])
        try #require(promoted.status == 0, "\(promoted.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/plugboard.lock")) == lockBefore, "the same lock file, signed again")
        let published = try Fleet.run(["publish", folder, "\(registry.address)/shop/plugins:stable", "--json"])
        #expect(published.json["blobsSent"] as? Int == 1, "only the signature is new: \(published.stdout)")
        let followed = try Fleet.run(["follow", "\(registry.address)/shop/plugins:stable", "--channel", "stable", "--once"] + trust)
        #expect(followed.json["decision"] as? String == "installed" && followed.json["sequence"] as? Int == 2, "\(followed.stdout)")
        #expect(snapshot(plugins) == snapshot(folder).filter { !$0.key.hasPrefix("lib/") }, "the new signature is in DIR")
        let host = try Fleet.run(["list", "--plugins", plugins, "--require-signatures", "--trusted-key", publisher.publicKey, "--channel", "stable", "--cache", work.sub("state"), "--json"])
        let records = host.json["plugins"] as? [[String: Any]] ?? []
        #expect(records.count == 2 && records.allSatisfy { $0["status"] as? String == "available" }, "\(host.stdout)\(host.stderr)")
    }
}
}
