/// How much one plugin may store. Writes past a limit fail with
/// `storage-quota-exceeded`, naming the limit, and keep what was stored.
public struct StorageQuota: Sendable, Equatable {
    /// All values of one plugin together, in bytes.
    public var maximumBytes: Int
    /// Number of keys with a value.
    public var maximumKeys: Int
    /// One value, in bytes.
    public var maximumValueBytes: Int

    public init(maximumBytes: Int = 64 << 20, maximumKeys: Int = 10_000, maximumValueBytes: Int = 16 << 20) {
        self.maximumBytes = maximumBytes
        self.maximumKeys = maximumKeys
        self.maximumValueBytes = maximumValueBytes
    }
}
