import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Holds the current ``RegistrySnapshot`` and hands it to readers without a
/// shared lock.
///
/// Writers (loading, reloading: rare) replace the snapshot under a mutex and
/// bump `generation`. Each reader thread caches the snapshot it last saw in
/// thread-local storage together with its generation; the read path is one
/// atomic load plus a thread-local lookup, and only a thread's first read
/// after a change takes the mutex. A thread keeps its cached snapshot (and the
/// providers in it) alive until its next read or until it exits.
@usableFromInline
final class SnapshotCell: Sendable {
    private let current: Locked<(snapshot: RegistrySnapshot, generation: Int)>
    @usableFromInline let generation = Atomic<Int>(0)
    // A `let`: a stored `var` would be checked for exclusive access on every
    // read (swift_beginAccess), which cost more than the rest of a lookup.
    @usableFromInline let key: pthread_key_t

    /// What one thread caches.
    @usableFromInline
    final class Cached {
        @usableFromInline let generation: Int
        @usableFromInline let snapshot: RegistrySnapshot
        init(generation: Int, snapshot: RegistrySnapshot) {
            self.generation = generation
            self.snapshot = snapshot
        }
    }

    init(_ snapshot: RegistrySnapshot) {
        current = Locked((snapshot, 0))
        // The destructor releases a thread's cached snapshot when the thread exits.
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<AnyObject>.fromOpaque(raw).release()
        }
        // Without a key of our own the cache would read another library's
        // thread-local values: stop rather than corrupt memory.
        precondition(created == 0, "pthread_key_create failed (\(created)): too many registries in this process")
        self.key = key
    }

    deinit {
        // Values still cached by other threads leak; cells live as long as their host.
        if let raw = pthread_getspecific(key) {
            Unmanaged<AnyObject>.fromOpaque(raw).release()
        }
        pthread_key_delete(key)
    }

    /// `body` with the current snapshot, lent without a reference count
    /// change when this thread's cached snapshot is current.
    @inlinable @inline(__always)
    func withSnapshot<Result>(_ body: (RegistrySnapshot) -> Result) -> Result {
        let latest = generation.load(ordering: .acquiring)
        if let raw = pthread_getspecific(key) {
            let cached = Unmanaged<Cached>.fromOpaque(raw)
            // The cache entry lives until this thread's next refresh, after body returns.
            if cached._withUnsafeGuaranteedRef({ $0.generation }) == latest {
                return cached._withUnsafeGuaranteedRef { body($0.snapshot) }
            }
        }
        return body(refresh())
    }

    /// The current snapshot.
    @inlinable @inline(__always)
    func read() -> RegistrySnapshot {
        let latest = generation.load(ordering: .acquiring)
        if let raw = pthread_getspecific(key) {
            let cached = Unmanaged<Cached>.fromOpaque(raw).takeUnretainedValue()
            if cached.generation == latest { return cached.snapshot }
        }
        return refresh()
    }

    @usableFromInline
    func refresh() -> RegistrySnapshot {
        let (snapshot, generation) = current.withLock { $0 }
        let old = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passRetained(Cached(generation: generation, snapshot: snapshot)).toOpaque())
        if let old { Unmanaged<Cached>.fromOpaque(old).release() }
        return snapshot
    }

    /// Runs `body` with the current snapshot while no update can run.
    func withCurrent<Result>(_ body: (RegistrySnapshot) -> Result) -> Result {
        current.withLock { body($0.snapshot) }
    }

    /// Replaces the snapshot with `update(current)`; returns the new one.
    @discardableResult
    func update(_ update: (RegistrySnapshot) -> RegistrySnapshot) -> RegistrySnapshot {
        current.withLock { state in
            let next = update(state.snapshot)
            state = (next, state.generation + 1)
            // Published after the new snapshot is in place: a reader that sees
            // the new generation finds the new snapshot under the mutex.
            generation.store(state.generation, ordering: .releasing)
            return next
        }
    }
}
