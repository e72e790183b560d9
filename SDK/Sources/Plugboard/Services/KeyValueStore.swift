/// Storage private to one plugin. Values survive restarts of the host.
///
/// Keys are any non-empty string up to ``maximumKeyLength`` UTF-8 bytes,
/// including `/`, `..` or NUL: they never name a file outside the plugin's
/// space, and no plugin can reach another's data. Each `set` replaces the
/// value atomically: after a crash a reader sees the old value or the new
/// one, never a mix.
public protocol KeyValueStore: Sendable {
    /// The value for `key`, nil if none.
    func value(for key: String) throws(StorageError) -> [UInt8]?
    /// Stores `value` for `key`, replacing any previous value atomically.
    func set(_ value: [UInt8], for key: String) throws(StorageError)
    /// Removes the value for `key`, if any.
    func removeValue(for key: String) throws(StorageError)
    /// Every key with a value, sorted.
    func keys() throws(StorageError) -> [String]
}

extension KeyValueStore {
    /// Longest key, in UTF-8 bytes (keys become file names; those stop at 255 bytes).
    public static var maximumKeyLength: Int { 120 }

    /// The value as UTF-8 text.
    public func string(for key: String) throws(StorageError) -> String? {
        try value(for: key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Stores UTF-8 text.
    public func set(_ string: String, for key: String) throws(StorageError) {
        try set(Array(string.utf8), for: key)
    }
}

/// Why a storage operation failed. Nothing already stored is lost by a failure.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is empty or longer than the limit.
    case invalidKey(String, reason: String)
    /// The host's storage directory cannot be written (permissions, disk full...).
    case notWritable(path: String, reason: String)
    /// Reading failed.
    case unreadable(path: String, reason: String)

    public var code: String {
        switch self {
        case .invalidKey: "storage-invalid-key"
        case .notWritable: "storage-not-writable"
        case .unreadable: "storage-unreadable"
        }
    }

    public var description: String {
        switch self {
        case let .invalidKey(key, reason): "invalid storage key '\(key.prefix(40))\(key.count > 40 ? "…" : "")': \(reason)"
        case let .notWritable(path, reason): "\(path): storage is not writable (\(reason)); check the host's data directory permissions"
        case let .unreadable(path, reason): "\(path): cannot read stored value (\(reason))"
        }
    }
}
