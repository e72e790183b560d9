#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new thread of its own that nobody joins: what
/// Foundation's `Thread` gave the host, without loading Foundation.
/// `stackSize` 0 keeps the system's default. False when the system cannot
/// start a thread now (`body` then never runs).
@discardableResult
package func startDetachedThread(stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    if stackSize > 0 { pthread_attr_setstacksize(&attributes, stackSize) }
    // The body travels to the thread retained once; the thread takes it.
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(&thread, &attributes, { context in
        guard let context else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().body()
        return nil
    }, context) == 0
    if !started { Unmanaged<ThreadBody>.fromOpaque(context).release() }
    return started
}

private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
