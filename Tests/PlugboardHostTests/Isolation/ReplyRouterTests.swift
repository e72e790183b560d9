import CPlugboardHost
import Dispatch
import Foundation
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reply router on real pipes, against a child played by threads that
/// answer in any order: every caller gets its own reply, never another's,
/// and none waits for a reply that came (one lost shows as a timeout).
@Suite struct ReplyRouterTests {
    /// Pipes as the host has them: requests non-blocking on its side.
    func channels() -> (host: FrameChannel, child: FrameChannel) {
        var requests: [Int32] = [-1, -1], replies: [Int32] = [-1, -1]
        #expect(plugboard_pipe(&requests, 0) == 0 && plugboard_pipe(&replies, 0) == 0)
        _ = fcntl(requests[1], F_SETFL, fcntl(requests[1], F_GETFL) | O_NONBLOCK)
        return (FrameChannel(input: replies[0], output: requests[1]), FrameChannel(input: requests[0], output: replies[1]))
    }

    @Test func manyCallersEachGetTheirOwnReply() throws {
        let (host, child) = channels()
        let router = ReplyRouter(channel: host, capacity: 16)
        // The child: one reader, replies written from a concurrent queue (out of order, beside each other).
        let answering = DispatchQueue(label: "child-replies", attributes: .concurrent), childDone = DispatchSemaphore(value: 0)
        Thread {
            while let frame = try? child.receive(until: nil) {
                let payload = Array(frame.payload)
                answering.async { _ = child.send(IsolationProtocol.Kind.reply.rawValue, sequence: frame.sequence, payload: payload) }
            }
            childDone.signal()
        }.start()
        let callers = 16, calls = 2_000
        let sequences = Atomic<UInt64>(0), wrong = Atomic<Int>(0), failed = Mutex<[String]>([])
        let start = DispatchSemaphore(value: 0), done = DispatchGroup()
        for _ in 0..<callers {
            done.enter()
            Thread {
                start.wait()
                for _ in 0..<calls {
                    let sequence = sequences.add(1, ordering: .relaxed).newValue
                    var bytes: [UInt8] = []
                    withUnsafeBytes(of: sequence.littleEndian) { bytes += $0 }
                    do {
                        let reply = try router.exchange(IsolationProtocol.Kind.call.rawValue, sequence: sequence, until: .now + .seconds(10)) { $0 += bytes }
                        if reply.sequence != sequence || Array(reply.payload) != bytes { wrong.add(1, ordering: .relaxed) }
                    } catch {
                        failed.withLock { $0.append("\(sequence): \(error)") }
                    }
                }
                done.leave()
            }.start()
        }
        for _ in 0..<callers { start.signal() }
        done.wait()
        #expect(failed.withLock { $0.prefix(5) }.isEmpty, "\(failed.withLock { $0.count }) calls failed")
        #expect(wrong.load(ordering: .relaxed) == 0, "replies crossed")
        #expect(router.inFlight == 0 && router.idle)
        router.close()
        child.close()
        childDone.wait()
    }
}
