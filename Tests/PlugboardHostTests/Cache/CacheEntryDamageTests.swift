@_spi(PlugboardHost) import Plugboard
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

/// A damaged entry is an error, never a read outside its bytes: the cache
/// then drops it and examines the file again.
@Suite struct CacheEntryDamageTests {
    static let details = PluginRecord.FileDetails(
        size: 3, architecture: "x86_64", toolchain: "Swift version 6.3.1", sdkABI: ABIVersion(major: 2, minor: 2),
        needed: ["libPlugboard.so"], runpath: [], hasEntryPoint: true)

    static let entry: [UInt8] = {
        let identity = FileIdentity(device: 1, inode: 2, size: 3, modified: 4, changed: 5)
        let scanned = ScannedPlugin(
            id: "damaged.plugin", version: "1.0.0", provides: [.init(interface: "plugboard.command", version: "1.0.0")],
            services: ["logger"], sdkABI: "2.2", sdkVersion: "2.2.0", toolchain: "Swift version 6.3.1",
            activation: ["startup"], requires: [PluginDependency(id: "other.plugin", range: "^1.0", optional: true)])
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
        // The requirements' flag: right after the activation triggers (the one text "startup").
        var flag = Self.entry
        let requiresFlag = try #require(flag.indices.reversed().first { Array(flag[$0...].prefix(7)) == Array("startup".utf8) }) + 7
        #expect(flag[requiresFlag] == 1)
        flag[requiresFlag] = 2
        #expect { try read(flag) } throws: { "\($0)".hasPrefix("a flag that is neither 0 nor 1") }
        // A count of texts the bytes cannot hold fails before any room is made for it.
        var count = Self.entry
        withUnsafeBytes(of: UInt32(0x7fff_ffff).littleEndian) { count.replaceSubrange((requiresFlag + 1)..<(requiresFlag + 5), with: $0) }
        #expect { try read(count) } throws: { "\($0)".contains("texts cannot fit") }
        // The hash may be absent, the id may not.
        var absent = Self.entry
        absent.replaceSubrange(61..<65, with: [0xff, 0xff, 0xff, 0xff])
        #expect { try read(absent) } throws: { "\($0)".hasPrefix("a required text is absent") }
    }

    /// A quarantine or file details with a value no host writes fail the
    /// entry, as does a flag that says details follow when none do.
    @Test func aQuarantineOrDetailsOutOfRangeIsDamage() throws {
        let identity = FileIdentity(device: 1, inode: 2, size: 3, modified: 4, changed: 5)
        let quarantine = Quarantine(
            phase: .entry, ending: .signal, signal: "SIGSEGV", exitStatus: 139, milliseconds: 1.5,
            stderrTail: [], date: "2026-11-26T21:00:00Z", evidence: nil)
        let quarantined = try CacheEntry(identity: identity, hash: nil, result: .quarantined(quarantine), details: nil).bytes()
        _ = try read(quarantined)
        // identity (40), an absent hash (4), the kind (1), then the phase's length and text.
        let phase = Array("entry".utf8)
        #expect(Array(quarantined[49..<54]) == phase)
        var badPhase = quarantined
        badPhase[49] = UInt8(ascii: "E")
        #expect { try read(badPhase) } throws: { "\($0)" == "an unknown quarantine phase \"Entry\"" }
        // The details are last: their flag, then the file size; a negative size is damage.
        var details = Self.entry
        let size = try #require(details.indices.reversed().first { index in
            index + 9 <= details.count && details[index] == 1 && Array(details[(index + 1)..<(index + 9)]) == [3, 0, 0, 0, 0, 0, 0, 0]
        })
        details.replaceSubrange((size + 1)..<(size + 9), with: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        #expect { try read(details) } throws: { "\($0)" == "a file size out of range" }
        // A flag saying details follow, with nothing after it.
        #expect { try read(Array(Self.entry[...size])) } throws: { "\($0)".hasPrefix("truncated at byte") }
    }
}
