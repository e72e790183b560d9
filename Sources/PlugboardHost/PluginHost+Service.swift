import Dispatch
import Synchronization

extension PluginHost {
    /// Runs until the host is shut down (``shutdown()``) or the calling
    /// task is cancelled, which shuts it down; then returns normally, never
    /// by throwing `CancellationError`. The shape of swift-service-lifecycle's
    /// `Service` (`Sendable` and `run() async throws`): a server's package
    /// writes `extension PluginHost: Service {}` and adds the host to its
    /// `ServiceGroup` (docs/host-authors.md, "In a service group"). It
    /// starts nothing: call ``start(rescan:)`` first, so that plugins are
    /// there before the server answers.
    public func run() async throws {
        await withTaskCancellationHandler {
            await ended.wait()
        } onCancel: {
            // Deactivating plugins blocks: not on the cancelling thread.
            DispatchQueue.global().async { self.shutdown() }
        }
    }
}

/// Told once, when the host has shut down: resumes every ``PluginHost/run()``.
final class ShutdownSignal: Sendable {
    private let state = Mutex<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if !state.done { state.waiting.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    func fire() {
        let waiting = state.withLock { state in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }
}
