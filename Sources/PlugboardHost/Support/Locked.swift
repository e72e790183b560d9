import Foundation

/// A value behind a pthread mutex (NSLock).
///
/// Used on the registry's paths instead of `Synchronization.Mutex`: on Linux
/// that one is built on raw futexes, which ThreadSanitizer cannot see, so
/// `swift test --sanitize=thread` would report every access as a race.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, which
    // holds `lock` for the whole access.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
