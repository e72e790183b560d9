import Foundation
import Synchronization

/// Releases every waiting thread at once, when the last one arrives.
final class Barrier: Sendable {
    private let state: Mutex<(waiting: Int, generation: Int)>
    private let count: Int
    private let condition = NSCondition()

    init(count: Int) {
        self.count = count
        state = Mutex((0, 0))
    }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        let (last, generation) = state.withLock { state -> (Bool, Int) in
            state.waiting += 1
            return (state.waiting == count, state.generation)
        }
        if last {
            state.withLock { state in
                state.waiting = 0
                state.generation += 1
            }
            condition.broadcast()
            return
        }
        while state.withLock({ $0.generation }) == generation { condition.wait() }
    }
}

/// Runs `body` on `count` threads released at the same instant (each first
/// runs `prepare`, outside the race), and returns when all are done.
func concurrently<Prepared>(
    _ count: Int, prepare: @escaping @Sendable () -> Prepared, _ body: @escaping @Sendable (Prepared) -> Void
) {
    let barrier = Barrier(count: count)
    let group = DispatchGroup()
    for _ in 0..<count {
        group.enter()
        Thread.detachNewThread {
            let prepared = prepare()
            barrier.arriveAndWait()
            body(prepared)
            group.leave()
        }
    }
    group.wait()
}

func concurrently(_ count: Int, _ body: @escaping @Sendable () -> Void) {
    concurrently(count, prepare: {}) { body() }
}

/// Repeats `step` on a thread of its own, from the moment the initialiser
/// returns (both sides pass a barrier first) until ``stop()``.
final class BackgroundLoop: Sendable {
    private let running = Atomic<Bool>(true)
    private let done = DispatchGroup()

    init(_ step: @escaping @Sendable () -> Void) {
        let started = Barrier(count: 2)
        done.enter()
        Thread.detachNewThread { [self] in
            started.arriveAndWait()
            while running.load(ordering: .relaxed) { step() }
            done.leave()
        }
        started.arriveAndWait()
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        done.wait()
    }
}

/// Keeps replacing `target` (by rename, as an installer would) with copies
/// of `first` and `second` in turn, staged in `staging`, from the moment it
/// returns until ``BackgroundLoop/stop()``. Copies, not hard links: a link
/// would change the installed file's ctime while a reader has it open, and
/// every read would be `file-changed`.
func swapping(_ target: String, between first: String, and second: String, staging: TemporaryDirectory) -> BackgroundLoop {
    let flip = Atomic<Bool>(false)
    return BackgroundLoop {
        let next = !flip.load(ordering: .relaxed)
        flip.store(next, ordering: .relaxed)
        let staged = staging.file("staged-\(next)")
        unlink(staged)
        try? FileManager.default.copyItem(atPath: next ? first : second, toPath: staged)
        rename(staged, target)
    }
}
