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
/// own threads alike) and its answer comes back on a pipe of its own.
enum StorageRelay {
    struct Request: Codable, Sendable {
        enum Operation: String, Codable, Sendable { case set, remove }
        /// Echoed by its answer: a late answer to an earlier request (one
        /// that timed out) is never taken for this one's.
        var sequence: UInt64
        var operation: Operation
        var key: String
        var value: [UInt8]
    }

    /// nil code: done.
    struct Answer: Codable, Sendable {
        var sequence: UInt64 = 0
        var code: String?
        var message: String?
        var path: String?

        init(_ error: ServiceError?, answering sequence: UInt64 = 0) {
            self.sequence = sequence
            code = error?.code.rawValue
            message = error?.message
            path = error?.path
        }

        var error: ServiceError? { code.map { ServiceError(ServiceError.Code($0), message ?? "", path: path) } }
    }

    /// How long a child waits for the host's answer before the write fails.
    static let answerTimeout: Int32 = 30_000

    /// The host's side: makes `request` in `store`.
    static func perform(_ request: Request, in store: FileKeyValueStore) -> Answer {
        do {
            switch request.operation {
            case .set: try store.set(request.value, for: request.key)
            case .remove: try store.removeValue(for: request.key)
            }
            return Answer(nil, answering: request.sequence)
        } catch {
            return Answer(error, answering: request.sequence)
        }
    }

    /// The host's side: an answer as the child reads it, a 4-byte length and the bytes.
    static func frame(_ answer: Answer) -> [UInt8] {
        let body = (try? CompactEncoder().encode(answer)) ?? []
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { bytes += $0 }
        return bytes + body
    }
}

/// The child's store when sandboxed: reads from its folder, writes through the host.
final class RelayedKeyValueStore: KeyValueStore {
    let local: FileKeyValueStore
    let notices: ChildNoticeWriter
    let answers: Int32
    /// One write in flight, and the last request's number.
    private let writing = Mutex<UInt64>(0)

    init(local: FileKeyValueStore, notices: ChildNoticeWriter, answers: Int32) {
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
            while let answer = readAnswer() {
                if answer.sequence == sequence { return answer }
            }
            return nil
        }
        guard let answer else {
            throw ServiceError(.storageNotWritable, "the host did not answer this sandboxed plugin's storage write", path: local.directory)
        }
        if let error = answer.error { throw error }
    }

    private func readAnswer() -> StorageRelay.Answer? {
        guard let header = read(4) else { return nil }
        let length = Int(header[0]) | Int(header[1]) << 8 | Int(header[2]) << 16 | Int(header[3]) << 24
        guard length < 1 << 20, let body = read(length) else { return nil }
        return try? CompactDecoder().decode(StorageRelay.Answer.self, from: body[...])
    }

    private func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, StorageRelay.answerTimeout)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(answers, $0.baseAddress! + done, count - done) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }
}
