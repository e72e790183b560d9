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
