/// Unsigned little-endian integers in byte buffers: the isolation
/// protocol's lengths, sequences and counts.
extension Collection where Element == UInt8, Index == Int {
    /// The integer of the `count` bytes (at most 8) from index `offset`;
    /// the caller checked that they are there.
    package func littleEndian(at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(self[offset + index]) << (8 * UInt64(index)) }
        return value
    }
}
