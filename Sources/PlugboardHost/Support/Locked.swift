import Foundation

/// A value behind a pthread mutex (NSLock).
///
/// The one exception to `Synchronization.Mutex`, kept where `make test-tsan`
/// looks (the registry's read path, the dev loop's threads): on Linux `Mutex`
/// is built on raw futexes, which ThreadSanitizer cannot see, so every access
/// guarded by it is reported as a race (tried: 5 false reports in the
/// registry stress test), and the sanitizer run would prove nothing.
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
