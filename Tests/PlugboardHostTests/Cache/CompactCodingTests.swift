@_spi(PlugboardHost) import Plugboard
import Testing

/// The compact coder's bytes (the registry cache's format, and what events
/// cross types in) and the rules a crossing shares with JSON.
@Suite struct CompactCodingTests {
    struct Inner: Codable { let flag: Bool; let text: String }

    /// Every kind of value the format has, written through every kind of
    /// container call.
    struct Sample: Encodable {
        let negative: Int, small: Int8, medium: Int16, byte: UInt8, big: UInt64
        let real: Double, half: Float, list: [Int?], inner: Inner

        enum CodingKeys: String, CodingKey { case negative, small, medium, byte, big, real, half, list, inner, nothing, parent }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(negative, forKey: .negative)
            try container.encode(small, forKey: .small)
            try container.encode(medium, forKey: .medium)
            try container.encode(byte, forKey: .byte)
            try container.encode(big, forKey: .big)
            try container.encode(real, forKey: .real)
            try container.encode(half, forKey: .half)
            try container.encode(list, forKey: .list)
            try container.encode(inner, forKey: .inner)
            try container.encodeNil(forKey: .nothing)
            var parent = container.superEncoder(forKey: .parent).singleValueContainer()
            try parent.encode("super value")
        }
    }

    /// The bytes the coder wrote when the cache's format 4 was made (the
    /// host's encoder before it moved into the SDK, run on this value): a
    /// faster encoder must write the same.
    @Test func theBytesOfEveryKindOfValueArePinned() throws {
        let sample = Sample(negative: -42, small: -7, medium: 300, byte: 255, big: .max, real: -1.5, half: 0.5,
                            list: [1, nil, -3], inner: Inner(flag: true, text: "héllo"))
        let bytes = try CompactEncoder().encode(sample)
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == "06fa0000000b000000080000006e6567617469766502d6ffffffffffffff05000000736d616c6c02f9ffffffffffffff060000006d656469756d022c01000000000000040000006279746503ff000000000000000300000062696703ffffffffffffffff040000007265616c04000000000000f8bf0400000068616c6604000000000000e03f040000006c6973740717000000030000000201000000000000000002fdffffffffffffff05000000696e6e657206210000000200000004000000666c616701010400000074657874050600000068c3a96c6c6f070000006e6f7468696e670006000000706172656e74050b00000073757065722076616c7565")
    }

    class Animal: Codable, @unchecked Sendable {
        // @unchecked: immutable after init.
        let legs: Int
        init(legs: Int) { self.legs = legs }
    }

    /// A subclass that keeps its superclass's part apart, as `Codable`
    /// recommends: `superEncoder()` under the key "super", which its own
    /// keys do not have.
    final class Dog: Animal, @unchecked Sendable {
        // @unchecked: immutable after init.
        let name: String
        enum CodingKeys: String, CodingKey { case name }
        init(name: String, legs: Int) {
            self.name = name
            super.init(legs: legs)
        }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: try container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func aSuperclassPartIsWrittenUnderSuperAndReadBack() throws {
        let bytes = try CompactEncoder().encode(Dog(name: "Rex", legs: 4))
        let dog = try CompactDecoder().decode(Dog.self, from: bytes)
        #expect(dog.name == "Rex" && dog.legs == 4)
    }

    struct Whole: Codable { let value: Int }
    struct Real: Codable { let value: Double }
    struct Single: Codable { let value: Float }

    @Test func numbersChangeTypeWhereTheValueFitsAsInJSON() throws {
        #expect(try CompactDecoder().decode(Real.self, from: CompactEncoder().encode(Whole(value: -3))).value == -3)
        #expect(try CompactDecoder().decode(Whole.self, from: CompactEncoder().encode(Real(value: 2))).value == 2)
        #expect(try CompactDecoder().decode(Real.self, from: CompactEncoder().encode(Single(value: 0.1))).value == 0.1,
                "a Float arrives as the Double JSON would give (0.1, not 0.10000000149)")
        #expect(try CompactDecoder().decode(Single.self, from: CompactEncoder().encode(Single(value: 0.1))).value == 0.1)
        #expect(throws: DecodingError.self, "2.5 is not an Int") {
            try CompactDecoder().decode(Whole.self, from: CompactEncoder().encode(Real(value: 2.5)))
        }
    }
}
