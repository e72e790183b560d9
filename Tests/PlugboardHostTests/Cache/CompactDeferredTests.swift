@_spi(PlugboardHost) import Plugboard
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

    /// Has a field its decoder never reads: decoding and encoding it again
    /// loses that field, copying its bytes keeps it.
    struct Lossy: Codable, Sendable, Equatable {
        let kept: Int
        var note: String?
        private enum Key: String, CodingKey { case kept, note }

        init(kept: Int, note: String?) {
            self.kept = kept
            self.note = note
        }

        init(from decoder: any Decoder) throws {
            kept = try decoder.container(keyedBy: Key.self).decode(Int.self, forKey: .kept)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(kept, forKey: .kept)
            try container.encodeIfPresent(note, forKey: .note)
        }
    }

    @Test func decodedLaterAndWrittenBackByteForByte() throws {
        let written = try CompactEncoder().encode(Holder(name: "a", details: CompactDeferred(details)))
        let read = try CompactDecoder().decode(Holder.self, from: written)
        #expect(read.details?.isEncoded == true, "kept as bytes when read")
        #expect(read.details?.value == details)
        #expect(try CompactEncoder().encode(read) == written)
        // Any other coder sees the value itself.
        let json = try JSONEncoder().encode(read)
        #expect(try JSONDecoder().decode(Holder.self, from: json).details?.value == details)

        // Copied, not decoded and encoded again: what the decoder skips stays.
        let lossy = try CompactEncoder().encode([CompactDeferred(Lossy(kept: 7, note: "only in the bytes"))])
        let again = try CompactEncoder().encode(try CompactDecoder().decode([CompactDeferred<Lossy>].self, from: lossy))
        #expect(again == lossy)
        #expect(String(decoding: again, as: UTF8.self).contains("only in the bytes"))
        #expect(try CompactDecoder().decode([CompactDeferred<Lossy>].self, from: again).first?.value == Lossy(kept: 7, note: nil))
    }

    /// Damage inside the details fails the whole entry, as a full decode
    /// would: the registry cache then drops it and examines the file again.
    @Test func damagedDetailsFailTheWholeValue() throws {
        var written = try CompactEncoder().encode(Holder(name: "a", details: CompactDeferred(details)))
        // The architecture's tag turned into one no value has; every length intact.
        let architecture = Array("x86_64".utf8)
        let at = try #require((0...(written.count - architecture.count)).first { Array(written[$0..<($0 + architecture.count)]) == architecture })
        written[at - 5] = 0xEE
        #expect(throws: DecodingError.self) { try CompactDecoder().decode(Holder.self, from: written) }
    }
}
