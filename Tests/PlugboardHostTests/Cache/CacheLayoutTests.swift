@_spi(PlugboardHost) import Plugboard
import Foundation
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

/// The registry cache's entries are fields in a fixed order, so a change to
/// what an entry holds must come with a new format number (`RegistryCache.format`): a cache of the
/// old format is then ignored and rebuilt, never half read.
@Suite struct CacheLayoutTests {
    @Test func theEntryLayoutIsPinnedToTheFormatNumber() throws {
        let identity = try JSONDecoder().decode(FileIdentity.self, from: Data("""
            [2049, 131, 537160, 1764100000000000000, 1764100000000000001]
            """.utf8))
        let scanned = try JSONDecoder().decode(ScannedPlugin.self, from: Data("""
            {"id": "pinned.plugin", "version": "1.2.3", "provides": [{"interface": "plugboard.command", "version": "1.0.0"}],
             "services": ["logger", "storage"], "sdkABI": "2.2", "sdkVersion": "2.2.0", "toolchain": "Swift version 6.3.1",
             "activation": ["startup", "command:greet"], "requires": ["?other.plugin ^1.0"],
             "needs": ["tcp-connect:443", "read:/etc/ssl/certs"]}
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
            RegistryCache.format == 7 && fingerprint == ["b15569eeaa4e72c5", "3940acd3a6610ad7", "847cc6c5f6959976"],
            "what a cache entry holds changed (\(fingerprint)): raise RegistryCache.format, then record the new fingerprints here")
    }
}
