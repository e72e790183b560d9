import Foundation
@testable import PlugboardHost
import Testing

/// A cache entry's file details stay in their compact bytes until read: a
/// warm start decodes the entry of every installed plugin, its file details
/// only for `inspect` and `--json`.
@Suite struct CompactDeferredTests {
    struct Holder: Codable, Equatable {
        let name: String
        let details: CompactDeferred<PluginRecord.FileDetails>?
    }

    let details = PluginRecord.FileDetails(
        size: 537_160, architecture: "x86_64", toolchain: "Swift version 6.3.1", sdkABI: ABIVersion(major: 2, minor: 2),
        needed: ["libswiftCore.so", "libPlugboard.so"], runpath: ["$ORIGIN"], hasEntryPoint: true)

    @Test func decodedLaterAndWrittenBackByteForByte() throws {
        let written = try CompactEncoder().encode(Holder(name: "a", details: CompactDeferred(details)))
        let read = try CompactDecoder().decode(Holder.self, from: written)
        #expect(read.details?.isEncoded == true, "kept as bytes when read")
        #expect(read.details?.value == details)
        #expect(try CompactEncoder().encode(read) == written, "its bytes are copied as they were")
        // Any other coder sees the value itself.
        let json = try JSONEncoder().encode(read)
        #expect(try JSONDecoder().decode(Holder.self, from: json).details?.value == details)
    }

    @Test func damagedDetailsReadAsNoneAndTheRestStands() throws {
        var written = try CompactEncoder().encode(Holder(name: "a", details: CompactDeferred(details)))
        // The architecture's bytes turned into a tag no value has: the outer
        // value still walks (lengths intact), the details no longer decode.
        let architecture = Array("x86_64".utf8)
        let at = try #require((0...(written.count - architecture.count)).first { Array(written[$0..<($0 + architecture.count)]) == architecture })
        written[at - 5] = 0xEE
        let read = try CompactDecoder().decode(Holder.self, from: written)
        #expect(read.name == "a")
        #expect(read.details != nil && read.details?.value == nil)
    }
}
