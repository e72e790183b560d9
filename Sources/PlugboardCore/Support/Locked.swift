#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex.
///
/// The one exception to `Synchronization.Mutex`, kept where `make test-tsan`
/// looks (the registry's read path, the dev loop's threads): on Linux `Mutex`
/// is built on raw futexes, which ThreadSanitizer cannot see, so every access
/// guarded by it is reported as a race (tried: 5 false reports in the
/// registry stress test), and the sanitizer run would prove nothing. A
/// pthread mutex is what the sanitizer intercepts (Foundation's `NSLock`,
/// used here before, is one; the host no longer loads Foundation).
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, which
    // holds `mutex` for the whole access.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        // Allocated, not stored: a pthread mutex must not move once in use.
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
