/// Storage private to one plugin. Values survive restarts of the host.
///
/// Keys are any non-empty string up to ``maximumKeyLength`` UTF-8 bytes,
/// including `/`, `..` or NUL: they never name a file outside the plugin's
/// space, and no plugin can reach another's data. Each `set` replaces the
/// value atomically: after a crash a reader sees the old value or the new
/// one, never a mix. A failure throws ``ServiceError`` and loses nothing
/// already stored. The codes a plugin can receive:
/// - ``ServiceError/Code/storageInvalidKey``: the key is empty or too long;
/// - ``ServiceError/Code/storageNotWritable``: the host's storage cannot be written;
/// - ``ServiceError/Code/storageUnreadable``: a stored value cannot be read;
/// - ``ServiceError/Code/storageSymlink``: the plugin's folder or a value
///   file is a link or a special file, which the host does not follow;
/// - ``ServiceError/Code/storageQuotaExceeded``: the host's quota for this
///   plugin (bytes, keys, value size) would be exceeded;
/// - ``ServiceError/Code/storageNotAFile``: a value file or the plugin's
///   folder is something else (a FIFO, a device, a file with other hard
///   links), which the host never reads through.
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
