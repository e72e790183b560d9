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

/// One running child of an isolated plugin, as the host sees it: its pid,
/// its channel, and a thread that drains its output and log records into
/// the host's diagnostics and log.
package final class IsolatedChildProcess: Sendable {
    package let pid: pid_t
    /// Written by calls and event deliveries (see FrameChannel); read only
    /// through ``replies``, or by a stop that holds every call slot.
    let channel: FrameChannel
    /// Routes each reply to the call waiting for it.
    let replies: ReplyRouter
    /// Writes cancels to this child, in order, off the cancelling thread.
    let cancels = DispatchQueue(label: "plugboard.isolated-cancels")

    /// Tells the child to cancel the call of `sequence` (the task serving
    /// it is cancelled), written whole off the calling thread.
    func cancelCall(_ sequence: UInt64) {
        cancels.async { [self] in
            _ = channel.sendWhole(IsolationProtocol.Kind.cancel.rawValue, sequence: sequence, until: .now + .seconds(1)) { _ in }
        }
    }
    /// How it ended, once reaped (nil while it may run): after that its pid
    /// may be another process's and is never signalled again.
    private let ending = Mutex<Ending?>(nil)
    private let output: ChildOutput
    /// Its cgroup leaf (docs/sandbox.md, "Resources"), removed once it is reaped.
    let cgroup: ChildCgroup?
    /// Why the host ended it (its task sampler, an unanswered ping), with the code its calls get.
    private let killedBy = Mutex<(code: IsolatedCallError.Code, reason: String)?>(nil)

    /// How the process ended.
    struct Ending: Sendable {
        let signal: Int32?
        let status: Int32?
        /// The kernel killed it for passing its memory bound (its cgroup counted the kill).
        var outOfMemory = false
        /// The host killed it (its task sampler, an unanswered ping): the code its calls get, and why.
        var killedBy: (code: IsolatedCallError.Code, reason: String)?
        var description: String {
            if outOfMemory, let signal { return "was killed by \(Signals.name(signal)) for passing its memory bound" }
            if let killedBy, let signal { return "was killed by \(Signals.name(signal)) for \(killedBy.reason)" }
            if let signal { return "was killed by \(Signals.name(signal))" }
            if let status { return "exited with status \(status)" }
            return "ended (its status could not be read: is SIGCHLD ignored in this process?)"
        }
    }

    private init(pid: pid_t, channel: FrameChannel, output: ChildOutput, callsInFlight: Int, cgroup: ChildCgroup?) {
        self.pid = pid
        self.cgroup = cgroup
        self.channel = channel
        replies = ReplyRouter(channel: channel, capacity: callsInFlight)
        self.output = output
    }

    /// Starts `program` (`plugboard-child`) as an isolated plugin's child,
    /// with the environment a scanner gets.
    static func spawn(
        program: String, passing names: [String], adding extra: [String: String], pluginID: String, callsInFlight: Int, preloadingFoundation: Bool = false,
        cgroup: ChildCgroup?, sampledTasks: Int? = nil, report: @escaping @Sendable (HostDiagnostic) -> Void, notice: @escaping @Sendable (ChildNotice) -> Void,
        relay: @escaping @Sendable (HostRelay.Request) -> HostRelay.Answer,
        ended: @escaping @Sendable (Int32) -> Void
    ) -> Result<IsolatedChildProcess, IsolatedCallError> {
        // What `ps` shows: `plugboard-child <plugin id>` (the id is checked: no spaces or controls).
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("plugboard-child"), strdup(pluginID), nil]
        var extra = extra
        extra[PLUGBOARD_CGROUP_VARIABLE] = cgroup?.joinedByChild
        // A spare of a plugin that links Foundation loads it while it waits (its main thread, at once).
        if preloadingFoundation { extra["PLUGBOARD_CHILD_FOUNDATION"] = "1" }
        var entries: [UnsafeMutablePointer<CChar>?] = ChildEnvironment.make(
            passing: names, adding: extra, variable: PLUGBOARD_CHILD_VARIABLE, value: PLUGBOARD_ISOLATED_PROTOCOL)
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            entries.forEach { free($0) }
        }
        var requests: Int32 = -1, replies: Int32 = -1, outputFD: Int32 = -1, log: Int32 = -1, answers: Int32 = -1
        var pid: pid_t = 0
        // Both rings or none; mapped here before the child can touch them.
        var rings = [plugboard_ring_create(), plugboard_ring_create()]
        let toChild = SharedRing(fd: rings[0]), fromChild = SharedRing(fd: rings[1])
        if toChild == nil || fromChild == nil {
            rings.filter { $0 >= 0 }.forEach { close($0) }
            rings = [-1, -1]
        }
        let result = plugboard_spawn_isolated(program, &arguments, &entries, &requests, &replies, &outputFD, &log, &answers, rings, &pid)
        rings.filter { $0 >= 0 }.forEach { close($0) }
        guard result == 0 else {
            return .failure(IsolatedCallError(.pluginCrashed, pluginID: pluginID,
                message: "cannot start its child process \(program): \(String(cString: strerror(result)))"))
        }
        // In its cgroup before it reads anything to load: on v1 it joins
        // itself before its main (and says in its start reply if it could
        // not), on v2 the host places it before the start frame.
        if let cgroup, cgroup.joinedByChild == nil, case let failed = cgroup.place(pid), !failed.isEmpty {
            report(HostDiagnostic(.warning, code: "resource-bounds-unavailable",
                message: "its child process \(pid) could not join its cgroup for \(failed.joined(separator: ", ")): it runs without those bounds",
                plugin: pluginID))
        }
        // Calls wait for room up to their deadline, events not at all (see
        // FrameChannel.send); an answer to a relayed request the child does not read is
        // dropped, never waited for.
        _ = fcntl(requests, F_SETFL, fcntl(requests, F_GETFL) | O_NONBLOCK)
        _ = fcntl(answers, F_SETFL, fcntl(answers, F_GETFL) | O_NONBLOCK)
        let output = ChildOutput(
            pluginID: pluginID, output: outputFD, notices: log, report: report, notice: notice, relayAnswers: answers, relay: relay, ended: { [pid] in ended(pid) })
        output.startDraining()
        let channel = rings[0] < 0 ? FrameChannel(input: replies, output: requests)
            : FrameChannel(input: replies, output: requests, incoming: fromChild, outgoing: toChild)
        let child = IsolatedChildProcess(pid: pid, channel: channel, output: output, callsInFlight: callsInFlight, cgroup: cgroup)
        if let bound = sampledTasks {
            TaskSampler.shared.watch(pid, bound: bound) { [weak child] tasks in
                child?.end(for: .pluginResourceExhausted, "holding \(tasks) tasks, past its bound of \(bound) (the host's sampler: no cgroup counts them here)")
            }
        }
        return .success(child)
    }

    /// Kills it for passing a bound the host enforces, unless it was reaped
    /// already (its pid may then be another's); the reap says why.
    func end(for code: IsolatedCallError.Code, _ reason: String) {
        ending.withLock { ending in
            guard ending == nil else { return }
            killedBy.withLock { $0 = (code, reason) }
            signalGroup()
        }
    }

    private func signalGroup() {
        Glibc.kill(-pid, SIGKILL)
        Glibc.kill(pid, SIGKILL)
        // On v2 its leaf's processes too (the plugin's, in other groups).
        cgroup?.killAll()
    }

    /// Waits for the child to end, once; later calls return the same
    /// ending. With `force` it is killed first; without, it gets up to a
    /// second to exit by itself, then is killed.
    @discardableResult
    func reap(force: Bool = true) -> Ending {
        ending.withLock { ending in
            if let ending { return ending }
            var status: Int32 = 0
            var waited: pid_t = 0
            if !force {
                // Asleep on a pidfd until it ends or the second is up (a
                // kernel without pidfd: no wait, it is killed at once).
                _ = plugboard_wait_child_end(pid, 1_000)
                waited = waitpid(pid, &status, WNOHANG)
            }
            if waited <= 0 {
                signalGroup()
                repeat { waited = waitpid(pid, &status, 0) } while waited < 0 && errno == EINTR
            }
            let signal = WaitStatus.signal(status)
            var result = waited < 0 ? Ending(signal: nil, status: nil)
                : signal != 0 ? Ending(signal: signal, status: nil) : Ending(signal: nil, status: WaitStatus.exitCode(status))
            // Read before the leaf goes: the kernel's count of kills for memory.
            result.killedBy = killedBy.withLock { $0 }
            // Not when the host ended it for a bound it enforces (its own code).
            result.outOfMemory = signal == SIGKILL && result.killedBy == nil && cgroup?.killedForMemory() == true
            TaskSampler.shared.forget(pid)
            cgroup?.remove()
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
        replies.close()
        // Its last output reaches the host's diagnostics before the stop returns.
        _ = outputTail(waiting: grace)
    }

    /// The last lines of its output, after waiting up to `wait` for the rest
    /// of it (a dying child's last words arrive after its channel closed).
    /// Called once the child was reaped: whatever its own children still
    /// write after `wait` is not read (the drain thread ends).
    func outputTail(waiting wait: Duration = .milliseconds(500)) -> [String] {
        output.tail(waiting: wait)
    }

    func closeChannel() {
        replies.close()
    }

    /// Ends the child now: killed with what it started (a forced reap kills
    /// first, unless it was reaped already), reaped, its channel closed.
    func end() {
        reap()
        closeChannel()
    }
}

/// The child's stdout and stderr, and its notice pipe, read by one thread until both end.
private final class ChildOutput: Sendable {
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
