@_spi(PlugboardHost) import Plugboard
import Foundation
@testable import PlugboardHost
import Testing

/// The registry cache's entries are read by field name and their file
/// details only when asked for, so a change to what an entry holds must
/// come with a new format number (`RegistryCache.format`): a cache of the
/// old format is then ignored and rebuilt, never half read.
@Suite struct CacheLayoutTests {
    @Test func theEntryLayoutIsPinnedToTheFormatNumber() throws {
        let identity = try JSONDecoder().decode(FileIdentity.self, from: Data("""
            [2049, 131, 537160, 1764100000000000000, 1764100000000000001]
            """.utf8))
        let scanned = try JSONDecoder().decode(ScannedPlugin.self, from: Data("""
            {"id": "pinned.plugin", "version": "1.2.3", "provides": [{"interface": "plugboard.command", "version": "1.0.0"}],
             "services": ["logger", "storage"], "sdkABI": "2.2", "sdkVersion": "2.2.0", "toolchain": "Swift version 6.3.1",
             "activation": ["startup", "command:greet"], "requires": ["?other.plugin ^1.0"]}
            """.utf8))
        let details = PluginRecord.FileDetails(
            size: 537_160, architecture: "x86_64", toolchain: "Swift version 6.3.1", sdkABI: ABIVersion(major: 2, minor: 2),
            needed: ["libswiftCore.so", "libPlugboard.so"], runpath: ["$ORIGIN"], hasEntryPoint: true)
        var quarantine = Quarantine(
            phase: .activate, ending: .signal, signal: "SIGSEGV", exitStatus: 139, milliseconds: 12.5,
            stderrTail: ["last words"], date: "2026-11-26T07:00:00Z", evidence: .frame)
        quarantine.interruptedStarts = 1
        quarantine.crashes = 2
        quarantine.window = 3
        quarantine.taint = ["unsigned"]
        let entries = [
            CacheEntry(identity: identity, hash: "0123456789abcdef", result: .plugin(scanned), details: details),
            CacheEntry(identity: identity, hash: nil, result: .rejected(code: "no-entry-point", reason: "no plugboard_entry"), details: details),
            CacheEntry(identity: identity, hash: nil, result: .quarantined(quarantine), details: details, plugin: scanned),
        ]
        let bytes = try entries.map { try $0.bytes() }
        for (entry, encoded) in zip(entries, bytes) { #expect(try encoded.withUnsafeBytes { try CacheEntry(bytes: $0) } == entry) }
        let fingerprint = bytes.map { encoded in encoded.withUnsafeBytes { ContentHash.text(ContentHash.of($0)) } }
        #expect(
            RegistryCache.format == 5 && fingerprint == ["ec0d160c1b8c805a", "0e5df70640d8e05f", "1cb06442ed41efb5"],
            "what a cache entry holds changed (\(fingerprint)): raise RegistryCache.format, then record the new fingerprints here")
    }
}

/// A damaged entry is an error, never a read outside its bytes: the cache
/// then drops it and examines the file again.
@Suite struct CacheEntryDamageTests {
    static let entry: [UInt8] = {
        let identity = FileIdentity(device: 1, inode: 2, size: 3, modified: 4, changed: 5)
        let scanned = ScannedPlugin(
            id: "damaged.plugin", version: "1.0.0", provides: [.init(interface: "plugboard.command", version: "1.0.0")],
            services: ["logger"], sdkABI: "2.2", sdkVersion: "2.2.0", toolchain: "Swift version 6.3.1",
            activation: ["startup"], requires: [PluginDependency(id: "other.plugin", range: "^1.0", optional: true)])
        let details = PluginRecord.FileDetails(
            size: 3, architecture: "x86_64", toolchain: "Swift version 6.3.1", sdkABI: ABIVersion(major: 2, minor: 2),
            needed: ["libPlugboard.so"], runpath: [], hasEntryPoint: true)
        return try! CacheEntry(identity: identity, hash: "0123456789abcdef", result: .plugin(scanned), details: details).bytes()
    }()

    func read(_ bytes: [UInt8]) throws -> CacheEntry {
        try bytes.withUnsafeBytes { raw throws(EntryReader.Damage) in try CacheEntry(bytes: raw) }
    }

    @Test func everyTruncationIsDamage() throws {
        _ = try read(Self.entry)
        for length in 0..<Self.entry.count {
            #expect(throws: EntryReader.Damage.self, "cut to \(length) bytes") { try read(Array(Self.entry.prefix(length))) }
        }
        #expect(throws: EntryReader.Damage.self) { try read(Self.entry + [0]) }
    }

    @Test func aFieldOutOfItsRangeIsDamage() throws {
        // identity (40), the hash (4 + 16), then the kind.
        var kind = Self.entry
        kind[60] = 7
        #expect { try read(kind) } throws: { "\($0)" == "an unknown kind of entry" }
        // The requirements' flag: after the texts, just before the last texts and the details.
        var flag = Self.entry
        let toolchainEnd = try #require(flag.indices.reversed().first { Array(flag[$0...].prefix(7)) == Array("startup".utf8) }) + 7
        #expect(flag[toolchainEnd] == 1)
        flag[toolchainEnd] = 2
        #expect { try read(flag) } throws: { "\($0)".hasPrefix("a flag that is neither 0 nor 1") }
        // A count of texts the bytes cannot hold fails before any room is made for it.
        var count = Self.entry
        withUnsafeBytes(of: UInt32(0x7fff_ffff).littleEndian) { count.replaceSubrange((toolchainEnd + 1)..<(toolchainEnd + 5), with: $0) }
        #expect { try read(count) } throws: { "\($0)".contains("texts cannot fit") }
        // The hash may be absent, the id may not.
        var absent = Self.entry
        absent.replaceSubrange(61..<65, with: [0xff, 0xff, 0xff, 0xff])
        #expect { try read(absent) } throws: { "\($0)".hasPrefix("a required text is absent") }
    }
}
