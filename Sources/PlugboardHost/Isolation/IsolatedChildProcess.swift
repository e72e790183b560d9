import CPlugboardHost
import Foundation
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One running child of an isolated plugin, as the host sees it: its pid,
/// its channel, and a thread that drains its output and log records into
/// the host's diagnostics and log.
final class IsolatedChildProcess: @unchecked Sendable {
    // @unchecked: `channel` is used only by the thread holding the plugin's
    // CallToken; everything else is immutable or behind `exit`/`output`.
    let pid: pid_t
    let channel: FrameChannel
    private let exit = Mutex<Ending?>(nil)
    private let output: ChildOutput

    /// How the process ended.
    struct Ending: Sendable {
        let signal: Int32?
        let status: Int32?
        var description: String {
            if let signal { return "was killed by \(Signals.name(signal))" }
            return "exited with status \(status ?? -1)"
        }
    }

    private init(pid: pid_t, channel: FrameChannel, output: ChildOutput) {
        self.pid = pid
        self.channel = channel
        self.output = output
    }

    /// Starts `program` in isolation mode with the scanner's environment.
    static func spawn(
        program: String, passing names: [String], adding extra: [String: String], pluginID: String,
        report: @escaping @Sendable (HostDiagnostic) -> Void, notice: @escaping @Sendable (ChildNotice) -> Void
    ) -> Result<IsolatedChildProcess, IsolatedCallError> {
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), nil]
        var entries: [UnsafeMutablePointer<CChar>?] = StartedScanner.environment(passing: names, adding: extra, mode: PLUGBOARD_ISOLATED_PROTOCOL)
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            entries.forEach { free($0) }
        }
        var requests: Int32 = -1, replies: Int32 = -1, outputFD: Int32 = -1, log: Int32 = -1
        var pid: pid_t = 0
        let result = plugboard_spawn_isolated(program, &arguments, &entries, &requests, &replies, &outputFD, &log, &pid)
        guard result == 0 else {
            return .failure(IsolatedCallError(.pluginCrashed, pluginID: pluginID,
                message: "cannot start its child process \(program): \(String(cString: strerror(result)))"))
        }
        // Calls wait for room up to their deadline, events not at all (see FrameChannel.send).
        _ = fcntl(requests, F_SETFL, fcntl(requests, F_GETFL) | O_NONBLOCK)
        let output = ChildOutput(pluginID: pluginID, output: outputFD, notices: log, report: report, notice: notice)
        output.startDraining()
        return .success(IsolatedChildProcess(pid: pid, channel: FrameChannel(input: replies, output: requests), output: output))
    }

    /// Kills the child and everything it started (its process group).
    func kill() {
        Glibc.kill(-pid, SIGKILL)
        Glibc.kill(pid, SIGKILL)
    }

    /// Waits for the child to end (killing it first when `force`), once;
    /// later calls return the same ending.
    @discardableResult
    func reap(force: Bool = true) -> Ending {
        exit.withLock { ending in
            if let ending { return ending }
            if force { kill() }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let signal = status & 0x7f
            let result = signal != 0 ? Ending(signal: signal, status: nil) : Ending(signal: nil, status: (status >> 8) & 0xff)
            ending = result
            return result
        }
    }

    /// Tells the child to stop (end of its request stream: it deactivates
    /// the plugin and exits), waits up to `grace`, then kills it.
    func stop(grace: Duration) {
        channel.closeOutput()
        var poller = pollfd(fd: channel.input, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + grace
        while deadline > .now {
            if poll(&poller, 1, Int32(clamping: Int64(((deadline - .now) / .milliseconds(1)).rounded(.up)))) <= 0 { break }
            var scratch = [UInt8](repeating: 0, count: 4096)
            if scratch.withUnsafeMutableBytes({ read(channel.input, $0.baseAddress, $0.count) }) <= 0 { break }
        }
        reap()
        channel.close()
        // Its last output reaches the host's diagnostics before the stop returns.
        _ = output.tail(waiting: grace)
    }

    /// The last lines of its output, after waiting up to `wait` for the rest
    /// of it (a dying child's last words arrive after its channel closed).
    func outputTail(waiting wait: Duration = .milliseconds(500)) -> [String] {
        output.tail(waiting: wait)
    }

    func closeChannel() {
        channel.close()
    }
}

/// The child's stdout and stderr, and its notice pipe, read by one thread until both end.
private final class ChildOutput: Sendable {
    let pluginID: String
    let outputFD: Int32
    let noticesFD: Int32
    let report: @Sendable (HostDiagnostic) -> Void
    let notice: @Sendable (ChildNotice) -> Void
    /// The last lines, and whether both pipes ended.
    private let state = Mutex<(lines: [String], partial: [UInt8], finished: Bool)>(([], [], false))
    /// Written once when draining ends, so a waiter can poll for it.
    private let finished: (read: Int32, write: Int32)

    static let tailLines = 20
    static let lineLimit = 500

    init(
        pluginID: String, output: Int32, notices: Int32, report: @escaping @Sendable (HostDiagnostic) -> Void,
        notice: @escaping @Sendable (ChildNotice) -> Void
    ) {
        self.pluginID = pluginID
        self.outputFD = output
        self.noticesFD = notices
        self.report = report
        self.notice = notice
        var ends: [Int32] = [-1, -1]
        _ = plugboard_pipe(&ends, 0)
        finished = (ends[0], ends[1])
    }

    deinit {
        close(finished.read)
    }

    func startDraining() {
        let thread = Thread { [self] in drain() }
        thread.stackSize = 256 << 10
        thread.start()
    }

    private func drain() {
        var pollers = [pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0), pollfd(fd: noticesFD, events: Int16(POLLIN), revents: 0)]
        var notices: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while pollers.contains(where: { $0.fd >= 0 }) {
            guard poll(&pollers, 2, -1) >= 0 || errno == EINTR else { break }
            for index in pollers.indices where pollers[index].fd >= 0 && pollers[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(pollers[index].fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    close(pollers[index].fd)
                    pollers[index].fd = -1
                    continue
                }
                if index == 0 {
                    takeOutput(chunk[0..<count])
                } else {
                    notices += chunk[0..<count]
                    if !ChildNotice.take(from: &notices, notice) {
                        // Not what a child of this program writes: stop listening to it.
                        report(HostDiagnostic(.error, code: "plugin-protocol-violation",
                            message: "its child wrote something that is not a notice on its notice pipe; its notices are ignored from now on", plugin: pluginID))
                        close(pollers[index].fd)
                        pollers[index].fd = -1
                    }
                }
            }
        }
        state.withLock { state in
            if !state.partial.isEmpty { finishLine(&state) }
            state.finished = true
        }
        close(finished.write)
    }

    private func takeOutput(_ bytes: ArraySlice<UInt8>) {
        state.withLock { state in
            for byte in bytes {
                if byte == 0x0A { finishLine(&state) } else if state.partial.count < Self.lineLimit * 4 { state.partial.append(byte) }
            }
        }
    }

    private func finishLine(_ state: inout (lines: [String], partial: [UInt8], finished: Bool)) {
        let line = TerminalText.escaped(String(decoding: state.partial, as: UTF8.self), limit: Self.lineLimit)
        state.partial.removeAll(keepingCapacity: true)
        state.lines.append(line)
        if state.lines.count > Self.tailLines { state.lines.removeFirst() }
        report(HostDiagnostic(.warning, code: "plugin-output", message: line, plugin: pluginID))
    }

    func tail(waiting wait: Duration) -> [String] {
        if !state.withLock({ $0.finished }) {
            var poller = pollfd(fd: finished.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(clamping: Int64(wait / .milliseconds(1))))
        }
        return state.withLock { $0.lines }
    }
}
