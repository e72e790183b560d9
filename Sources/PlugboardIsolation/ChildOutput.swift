import CPlugboardHost
import Dispatch
import FoundationEssentials
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardLoading

/// The child's stdout and stderr, and its notice pipe, read by one thread until both end.
final class ChildOutput: Sendable {
    let pluginID: String
    let outputFD: Int32
    let noticesFD: Int32
    let report: @Sendable (HostDiagnostic) -> Void
    let notice: @Sendable (ChildNotice) -> Void
    /// Where the answers to relayed requests go (``HostRelay``), and who makes them.
    let relayAnswers: FrameChannel
    let relay: @Sendable (HostRelay.Request) -> HostRelay.Answer
    /// Told when both pipes ended on their own (the child died, or closed
    /// them), not when the host stopped reading.
    let ended: @Sendable () -> Void
    /// The last lines, and whether both pipes ended.
    private let state = Mutex<(lines: [String], partial: [UInt8], finished: Bool)>(([], [], false))
    /// Written once when draining ends, so a waiter can poll for it.
    private let finished: (read: Int32, write: Int32)
    /// Written by a waiter that stops waiting: the drain ends too (a
    /// process the plugin started may keep the output pipe open for ever).
    private let quit: (read: Int32, write: Int32)

    static let tailLines = 20
    static let lineLimit = 500

    init(
        pluginID: String, output: Int32, notices: Int32, report: @escaping @Sendable (HostDiagnostic) -> Void,
        notice: @escaping @Sendable (ChildNotice) -> Void, relayAnswers: Int32,
        relay: @escaping @Sendable (HostRelay.Request) -> HostRelay.Answer, ended: @escaping @Sendable () -> Void
    ) {
        self.relayAnswers = FrameChannel(input: -1, output: relayAnswers)
        self.relay = relay
        self.ended = ended
        self.pluginID = pluginID
        self.outputFD = output
        self.noticesFD = notices
        self.report = report
        self.notice = notice
        var ends: [Int32] = [-1, -1]
        _ = plugboard_pipe(&ends, 0)
        finished = (ends[0], ends[1])
        var quitEnds: [Int32] = [-1, -1]
        _ = plugboard_pipe(&quitEnds, 1)
        quit = (quitEnds[0], quitEnds[1])
    }

    deinit {
        close(finished.read)
        close(quit.read)
        close(quit.write)
    }

    func startDraining() {
        startDetachedThread(stackSize: 256 << 10) { [self] in drain() }
    }

    private func drain() {
        var pollers = [
            pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0), pollfd(fd: noticesFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: quit.read, events: Int16(POLLIN), revents: 0),
        ]
        var notices: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var quitting = false
        // After the quit, a bounded read: a process the child left behind
        // may write without end.
        var readsAfterQuit = 64
        // Output lines of one burst (until it pauses for burstPause), reported as one diagnostic.
        var burst: [String] = []
        while pollers[0].fd >= 0 || pollers[1].fd >= 0 {
            if quitting {
                readsAfterQuit -= 1
                if readsAfterQuit < 0 { break }
            }
            // Once told to end, what is already written is still read (a
            // last notice may sit beside the quit); nothing more is waited for.
            let ready = poll(&pollers, 3, quitting ? 0 : burst.isEmpty ? -1 : Self.burstPause)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 && !quitting {
                report(burst: &burst)
                continue
            }
            if ready < 0 || (quitting && ready == 0) { break }
            if pollers[2].revents != 0 {
                quitting = true
                pollers[2].fd = -1
            }
            for index in 0..<2 where pollers[index].fd >= 0 && pollers[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(pollers[index].fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    close(pollers[index].fd)
                    pollers[index].fd = -1
                    continue
                }
                if index == 0 {
                    takeOutput(chunk[0..<count], into: &burst)
                    if burst.count >= Self.tailLines * 5 { report(burst: &burst) }
                } else {
                    notices += chunk[0..<count]
                    let taken = ChildNotice.take(from: &notices) { notice in
                        // Answered on this thread, in order: the child waits for it.
                        if case let .relay(request) = notice {
                            HostRelay.send(relay(request), to: request, on: relayAnswers)
                        } else {
                            self.notice(notice)
                        }
                    }
                    if !taken {
                        // Not what a child of this program writes: stop listening to it.
                        report(HostDiagnostic(.error, code: "plugin-protocol-violation",
                            message: "its child wrote something that is not a notice on its notice pipe; its notices are ignored from now on", plugin: pluginID))
                        close(pollers[index].fd)
                        pollers[index].fd = -1
                    }
                }
            }
        }
        for index in 0..<2 where pollers[index].fd >= 0 { close(pollers[index].fd) }
        relayAnswers.closeOutput()
        let last = state.withLock { state -> [String] in
            defer { state.finished = true }
            return state.partial.isEmpty ? [] : [finishLine(&state)]
        }
        last.forEach { reportLine($0, into: &burst) }
        report(burst: &burst)
        close(finished.write)
        if !quitting { ended() }
    }

    private func takeOutput(_ bytes: ArraySlice<UInt8>, into burst: inout [String]) {
        // Lines are taken after the lock is let go: a sink may block.
        let lines = state.withLock { state -> [String] in
            var lines: [String] = []
            for byte in bytes {
                if byte == 0x0A { lines.append(finishLine(&state)) } else if state.partial.count < Self.lineLimit * 4 { state.partial.append(byte) }
            }
            return lines
        }
        for line in lines { reportLine(line, into: &burst) }
    }

    private func finishLine(_ state: inout (lines: [String], partial: [UInt8], finished: Bool)) -> String {
        let line = TerminalText.escaped(String(decoding: state.partial, as: UTF8.self), limit: Self.lineLimit)
        state.partial.removeAll(keepingCapacity: true)
        state.lines.append(line)
        if state.lines.count > Self.tailLines { state.lines.removeFirst() }
        return line
    }

    /// How long output pauses to end a burst, milliseconds: a crash's
    /// dozen lines are one `plugin-output` diagnostic, not a dozen.
    static let burstPause: Int32 = 20

    /// The burst's lines as one `plugin-output` diagnostic, one per line of the message.
    private func report(burst: inout [String]) {
        guard !burst.isEmpty else { return }
        report(HostDiagnostic(.warning, code: "plugin-output", message: burst.joined(separator: "\n"), plugin: pluginID))
        burst.removeAll()
    }

    /// A line of its output, added to the burst; the line its sandbox
    /// writes for a refused system call (`sandbox.c`) becomes
    /// `sandbox-denied` at once, and the empty line that call starts with is dropped.
    private func reportLine(_ line: String, into burst: inout [String]) {
        if line.isEmpty { return }
        if line.hasPrefix(Self.denial) {
            report(HostDiagnostic(.warning, code: "sandbox-denied",
                message: "its sandbox refused the system call \(line.dropFirst(Self.denial.count)) (the call failed with EPERM); if the plugin needs it, it cannot run sandboxed", plugin: pluginID))
            return
        }
        burst.append(line)
    }

    static let denial = PLUGBOARD_DENIAL_PREFIX

    /// The last lines, after waiting up to `wait` for the drain to end; then
    /// the drain is told to end whatever is still open.
    func tail(waiting wait: Duration) -> [String] {
        if !state.withLock({ $0.finished }) {
            var poller = pollfd(fd: finished.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(clamping: Int64(wait / .milliseconds(1))))
            var byte: UInt8 = 1
            _ = write(quit.write, &byte, 1)
        }
        return state.withLock { $0.lines }
    }
}
