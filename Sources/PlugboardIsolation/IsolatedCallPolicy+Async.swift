extension IsolatedCallPolicy {
    /// The threads ``withoutBlocking(_:)`` runs calls on: enough for every
    /// call in flight of a busy server; past it, calls queue (not the pool).
    static let blockingCalls = CallThreads(maximum: 512)

    /// Runs `body` (calls of providers, isolated ones included) on a thread
    /// of the host's own while the calling task waits without holding one of
    /// Swift's pool threads: on a server, a slow isolated call no longer
    /// stalls other requests. Cancelling the task throws `CancellationError`
    /// at once, and an isolated call in flight in `body` is cancelled in its
    /// child (the task serving it there is cancelled; a provider that never
    /// looks keeps running until it returns, and its reply is dropped).
    ///
    /// ```swift
    /// let reply = try await IsolatedCallPolicy.withoutBlocking { try command.run(arguments: ["Ada"]) }
    /// ```
    public static func withoutBlocking<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        let call = CallCancellation()
        let deadline = deadlineOverride
        let outcome = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
                guard call.waiting({ continuation.resume(with: $0) }) else {
                    return continuation.resume(throwing: CancellationError())
                }
                blockingCalls.run {
                    // Cancelled before a thread took it: the caller was told; nothing runs.
                    guard !call.isCancelled else { return }
                    let result = Swift.Result<any Sendable, any Error> {
                        try CallCancellation.$current.withValue(call) {
                            try $deadlineOverride.withValue(deadline) { try body() }
                        }
                    }
                    call.finish(result)
                }
            }
        } onCancel: {
            call.cancel()
        }
        // What body returned, boxed only to cross the continuation.
        return outcome as! Result
    }
}
