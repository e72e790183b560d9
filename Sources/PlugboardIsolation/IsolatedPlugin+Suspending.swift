@_spi(PlugboardHost) import Plugboard
import PlugboardCore

/// Calls from async code (an `async` requirement's proxy): the calling task
/// writes the request and suspends; whoever reads the child's replies
/// resumes it (ReplyRouter+Suspending.swift). No thread is handed the call,
/// so it costs what a thread's call costs. Where that would wait (no free
/// call slot, no running child, a replaced generation, the pipe full, a
/// large frame), the call goes the blocking way on the host's call threads
/// (``IsolatedCallPolicy/withoutBlocking(_:)``), as before.
extension IsolatedPlugin {
    /// One call of requirement `method` of provider `index` from a task; the reply's bytes.
    func callSuspending(_ index: UInt32, interfaceID: String, method: String, arguments: some Encodable) async throws -> ArraySlice<UInt8> {
        if Task.isCancelled { throw CancellationError() }
        let encoded = try encoded(arguments, of: method)
        if let reply = try await answerSuspending(index, interfaceID: interfaceID, method: method, encoded: encoded) { return reply }
        return try await IsolatedCallPolicy.withoutBlocking { [self] in
            try call(index, interfaceID: interfaceID, method: method, encoded: encoded)
        }
    }

    /// The call sent from the task, if it can go without waiting (nil: it was not sent).
    private func answerSuspending(_ index: UInt32, interfaceID: String, method name: String, encoded: [UInt8]) async throws -> ArraySlice<UInt8>? {
        let limit = IsolatedCallPolicy.deadlineOverride ?? (launch.policies[interfaceID] ?? .standard).deadline
        let method = Array(name.utf8.prefix(Int(UInt16.max)))
        // Too large: the blocking way refuses it with its code.
        guard encoded.count + method.count + 64 <= IsolationProtocol.maximumFrame, slots.acquire(until: .now) else { return nil }
        defer { slots.release() }
        guard case let .running(.child(member, child))? = try? current() else { return nil }
        // A pool's: counted by current() as it chose this child.
        defer { if pooled { state.withLock { $0.load[member] -= 1 } } }
        counts.inFlight.add(1, ordering: .relaxed)
        defer { counts.inFlight.subtract(1, ordering: .relaxed) }
        let sequence = nextSequence()
        guard let outcome = await child.replies.exchangeSuspending(
            IsolationProtocol.Kind.call.rawValue, sequence: sequence, until: .now + limit, capacity: 6 + method.count + encoded.count,
            fill: { request(index, method, encoded, into: &$0) }, cancelled: { child.cancelCall(sequence) }
        ) else { return nil }
        counts.calls.add(1, ordering: .relaxed)
        counts.sentFromTasks.add(1, ordering: .relaxed)
        do {
            if case .failure(.cancelled) = outcome {
                endIfDrained(child)
                throw CancellationError()
            }
            return try reply(from: outcome, of: child, sequence: sequence, method: method, limit: limit)
        } catch {
            counts.failures.add(1, ordering: .relaxed)
            throw error
        }
    }
}
