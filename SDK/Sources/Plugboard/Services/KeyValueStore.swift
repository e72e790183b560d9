/// Storage private to one plugin. Values survive restarts of the host.
///
/// Keys are any non-empty string up to ``maximumKeyLength`` UTF-8 bytes,
/// including `/`, `..` or NUL: they never name a file outside the plugin's
/// space, and no plugin can reach another's data. Each `set` replaces the
/// value atomically: after a crash a reader sees the old value or the new
/// one, never a mix. A failure throws ``ServiceError`` (codes
/// ``ServiceError/Code/storageInvalidKey``, ``ServiceError/Code/storageNotWritable``,
/// ``ServiceError/Code/storageUnreadable``) and loses nothing already stored.
public protocol KeyValueStore: Sendable {
    /// The value for `key`, nil if none.
    func value(for key: String) throws(ServiceError) -> [UInt8]?
    /// Stores `value` for `key`, replacing any previous value atomically.
    func set(_ value: [UInt8], for key: String) throws(ServiceError)
    /// Removes the value for `key`, if any.
    func removeValue(for key: String) throws(ServiceError)
    /// Every key with a value, sorted.
    func keys() throws(ServiceError) -> [String]
}

extension KeyValueStore {
    /// Longest key, in UTF-8 bytes (keys become file names; those stop at 255 bytes).
    public static var maximumKeyLength: Int { 120 }

    /// The value as UTF-8 text.
    public func string(for key: String) throws(ServiceError) -> String? {
        try value(for: key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Stores UTF-8 text.
    public func set(_ string: String, for key: String) throws(ServiceError) {
        try set(Array(string.utf8), for: key)
    }
}
