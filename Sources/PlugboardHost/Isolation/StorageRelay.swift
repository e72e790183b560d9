import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A sandboxed child's storage writes, made by the host: the child's
/// storage folder is read-only to it, so a plain `write(2)` cannot pass the
/// quota or fill the disk. The child reads its folder itself.
///
/// A write goes to the host as a notice (the pipe a host thread reads all
/// the time, so it works during a call, an event handler or the plugin's
/// own threads alike) and its answer comes back on a pipe of its own, as a
/// ``FrameChannel`` frame whose sequence is the request's.
enum StorageRelay {
    struct Request: Codable, Sendable {
        enum Operation: String, Codable, Sendable { case set, remove }
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

    /// How long a child waits for the host's answer before the write fails.
    static let answerTimeout = Duration.seconds(30)

    /// The host's side: makes `request` in `store`.
    static func perform(_ request: Request, in store: FileKeyValueStore) -> Answer {
        do {
            switch request.operation {
            case .set: try store.set(request.value, for: request.key)
            case .remove: try store.removeValue(for: request.key)
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
        _ = answers.sendIfRoom(IsolationProtocol.Kind.storageAnswer.rawValue, sequence: request.sequence) { $0 += payload }
    }
}

/// The child's store when sandboxed: reads from its folder, writes through the host.
final class RelayedKeyValueStore: KeyValueStore {
    let local: FileKeyValueStore
    let notices: ChildNoticeWriter
    /// Read only under `writing`: one reader at a time, as FrameChannel asks.
    let answers: FrameChannel
    /// One write in flight, and the last request's number.
    private let writing = Mutex<UInt64>(0)

    init(local: FileKeyValueStore, notices: ChildNoticeWriter, answers: FrameChannel) {
        self.local = local
        self.notices = notices
        self.answers = answers
    }

    func value(for key: String) throws(ServiceError) -> [UInt8]? { try local.value(for: key) }
    func keys() throws(ServiceError) -> [String] { try local.keys() }

    func set(_ value: [UInt8], for key: String) throws(ServiceError) {
        try relay(.set, key, value)
    }

    func removeValue(for key: String) throws(ServiceError) {
        try relay(.remove, key, [])
    }

    private func relay(_ operation: StorageRelay.Request.Operation, _ key: String, _ value: [UInt8]) throws(ServiceError) {
        let answer = writing.withLock { sequence -> StorageRelay.Answer? in
            sequence += 1
            notices.send(.storage(StorageRelay.Request(sequence: sequence, operation: operation, key: key, value: value)))
            // Answers to earlier requests that timed out come first: skipped.
            let deadline = ContinuousClock.now + StorageRelay.answerTimeout
            while let frame = try? answers.receive(until: deadline) {
                if frame.sequence == sequence { return try? CompactDecoder().decode(StorageRelay.Answer.self, from: frame.payload) }
            }
            return nil
        }
        guard let answer else {
            throw ServiceError(.storageNotWritable, "the host did not answer this sandboxed plugin's storage write", path: local.directory)
        }
        if let error = answer.error { throw error }
    }
}
