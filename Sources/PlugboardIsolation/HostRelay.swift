import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardServices

/// What a child asks the host to do and waits for: a sandboxed child's
/// storage writes (its folder is read-only to it, so a plain `write(2)`
/// cannot pass the quota or fill the disk) and a route registration (the
/// host's table decides conflicts, and serves the route by calling the child).
///
/// A request goes to the host as a notice (the pipe a host thread reads all
/// the time, so it works during a call, an event handler or the plugin's
/// own threads alike) and its answer comes back on a pipe of its own, as a
/// ``FrameChannel`` frame whose sequence is the request's.
enum HostRelay {
    struct Request: Codable, Sendable {
        enum Operation: String, Codable, Sendable {
            case set, remove
            /// Register the route whose pattern is `key`.
            case route
        }
        /// Its answer's frame sequence: a late answer to an earlier request
        /// (one that timed out) is never taken for this one's.
        var sequence: UInt64
        var operation: Operation
        var key: String
        var value: [UInt8]
    }

    /// nil code: done.
    struct Answer: Codable, Sendable {
        var code: String?
        var message: String?
        var path: String?

        init(_ error: ServiceError?) {
            code = error?.code.rawValue
            message = error?.message
            path = error?.path
        }

        var error: ServiceError? { code.map { ServiceError(ServiceError.Code($0), message ?? "", path: path) } }
    }

    /// How long a child waits for the host's answer before the request fails.
    static let answerTimeout = Duration.seconds(30)

    /// The host's side: makes storage `request` in `store`.
    static func perform(_ request: Request, in store: FileKeyValueStore) -> Answer {
        do {
            switch request.operation {
            case .set: try store.set(request.value, for: request.key)
            case .remove: try store.removeValue(for: request.key)
            case .route: return Answer(ServiceError(.serviceUnavailable, "not a storage request"))
            }
            return Answer(nil)
        } catch {
            return Answer(error)
        }
    }

    /// The host's side: sends `answer` to `request`'s child without waiting
    /// (an answer it does not read is dropped; `sendIfRoom` never blocks nor
    /// raises SIGPIPE).
    static func send(_ answer: Answer, to request: Request, on answers: FrameChannel) {
        let payload = (try? CompactEncoder().encode(answer)) ?? []
        _ = answers.sendIfRoom(IsolationProtocol.Kind.relayAnswer.rawValue, sequence: request.sequence) { $0 += payload }
    }

    /// The child's side: one request at a time, each waiting for its answer.
    final class Asker: Sendable {
        let notices: ChildNoticeWriter
        /// Read only under `asking`: one reader at a time, as FrameChannel asks.
        private let answers: FrameChannel
        /// One request in flight, and the last request's number.
        private let asking = Mutex<UInt64>(0)

        init(notices: ChildNoticeWriter, answers: FrameChannel) {
            self.notices = notices
            self.answers = answers
        }

        /// The host's answer; nil when it did not answer in time.
        func ask(_ operation: Request.Operation, _ key: String, _ value: [UInt8] = []) -> Answer? {
            asking.withLock { sequence -> Answer? in
                sequence += 1
                notices.send(.relay(Request(sequence: sequence, operation: operation, key: key, value: value)))
                // Answers to earlier requests that timed out come first: skipped.
                let deadline = ContinuousClock.now + HostRelay.answerTimeout
                while let frame = try? answers.receive(until: deadline) {
                    if frame.sequence == sequence { return try? CompactDecoder().decode(Answer.self, from: frame.payload) }
                }
                return nil
            }
        }
    }
}

/// The child's store when sandboxed: reads from its folder, writes through the host.
final class RelayedKeyValueStore: KeyValueStore {
    let local: FileKeyValueStore
    let host: HostRelay.Asker

    init(local: FileKeyValueStore, host: HostRelay.Asker) {
        self.local = local
        self.host = host
    }

    func value(for key: String) throws(ServiceError) -> [UInt8]? { try local.value(for: key) }
    func keys() throws(ServiceError) -> [String] { try local.keys() }

    func set(_ value: [UInt8], for key: String) throws(ServiceError) {
        try relay(.set, key, value)
    }

    func removeValue(for key: String) throws(ServiceError) {
        try relay(.remove, key, [])
    }

    private func relay(_ operation: HostRelay.Request.Operation, _ key: String, _ value: [UInt8]) throws(ServiceError) {
        guard let answer = host.ask(operation, key, value) else {
            throw ServiceError(.storageNotWritable, "the host did not answer this sandboxed plugin's storage write", path: local.directory)
        }
        if let error = answer.error { throw error }
    }
}
