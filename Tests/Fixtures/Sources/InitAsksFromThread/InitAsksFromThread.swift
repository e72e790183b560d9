import FixtureSupport
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Its `init` starts a thread that publishes `fixture.ping` (LazyEvent's
/// trigger) through this plugin's context, and waits for that thread: the
/// shape of an `init` that hands work to a `Task` or a queue and waits. The
/// defined answer: the publish starts nothing and returns, so the `init`
/// does too. Its command answers what the thread's publish got.
final class InitAsksFromThread: Plugin {
    let answer: String

    init(context: PluginContext) throws {
        let events = try context.service(Services.Events.self)
        let box = Box(events: events)
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeUnretainedValue()
            let delivery = box.events.publish(EventPayload(name: "fixture.ping", json: Array("{}".utf8)))
            box.delivered.withLock { $0 = delivery.delivered }
            sem_post(box.done)
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        guard started == 0 else { throw FixtureError(message: "no thread") }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += 20
        var waited: Int32
        repeat { waited = sem_timedwait(box.done, &deadline) } while waited != 0 && errno == EINTR
        guard waited == 0 else {
            // The thread is stuck (in the host): it keeps the box.
            _ = Unmanaged.passRetained(box)
            throw FixtureError(message: "the thread's publish did not return within 20 s")
        }
        pthread_join(thread, nil)
        answer = "thread's publish delivered \(box.delivered.withLock { $0 })"
    }

    func contributions() -> [Contribution] { [.provider(EchoCommand(name: answer), for: Commands.self)] }
}

/// What the init and its thread share.
private final class Box: Sendable {
    let events: any EventBus
    let delivered = Mutex(-1)
    /// Posted by the thread once its publish returned. A raw semaphore,
    /// whose address is fixed for the box's life; unsafe only in name:
    /// `sem_post` and `sem_wait` are safe from any thread.
    nonisolated(unsafe) let done = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init(events: any EventBus) {
        self.events = events
        sem_init(done, 0, 0)
    }

    deinit {
        sem_destroy(done)
        done.deallocate()
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: InitAsksFromThread.self, id: "fixture.init-asks-from-thread", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Events.id])
}
