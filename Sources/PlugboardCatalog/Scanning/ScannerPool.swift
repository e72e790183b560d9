import CPlugboardHost
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission
import PlugboardLoading

/// One scanner child as the host sees it.
final class ScannerProcess {
    let pid: pid_t
    let channel: Int32
    var errors: Int32
    var ready = false
    var job: Int?
    var phase: Quarantine.Phase?
    var started = ContinuousClock.now
    var deadline: ContinuousClock.Instant
    /// The channel's messages, line by line.
    let connection: LineChannel
    /// stderr since the current job started (capped).
    var stderr: [UInt8] = []
    /// Jobs it answered, in order.
    var served: [Int] = []
    /// Scans one file only (a re-scan after a crash), then is retired.
    var isolated = false
    /// Told to exit (end of stream on its channel).
    var retiring = false
    var finished = false

    init(pid: pid_t, channel: Int32, errors: Int32, deadline: ContinuousClock.Instant) {
        self.pid = pid
        self.channel = channel
        self.errors = errors
        self.deadline = deadline
        connection = LineChannel(fd: channel)
    }
}

/// The scanning loop: one thread, `poll` over every child's channel and
/// stderr, deadlines per file.
///
/// Blame: a child that dies on its first file (or a child that scans one
/// file only) convicts that file. A child that had already answered for
/// other files might be dying of one of them (a thread its constructor
/// started, say), so that file and the earlier ones are scanned again, each
/// alone in a fresh child, before anyone is quarantined. A child that ends
/// abnormally after answering is treated the same way.
package struct Pool {
    let settings: ScannerSettings
    let jobs: [PluginScanner.Job]
    var outcomes: [PluginScanner.Outcome?]
    var timelines: [PluginScanner.Timeline]
    var queue: [Int]
    /// Jobs to scan again, each alone in a fresh child.
    var isolatedQueue: [Int] = []
    var children: [ScannerProcess] = []
    var unavailable: String?
    var spawned = 0
    let executable: String
    let parallelism: Int
    let spare: ScannerSpare?
    let endsAtAnswers: Bool

    static let stderrCap = 16 * 1024
    /// How often a child is checked with `waitpid` even when its channel is
    /// quiet: something it forked may hold the channel open after it died.
    static let reapInterval: Double = 100

    init(settings: ScannerSettings, jobs: [PluginScanner.Job], spare: ScannerSpare?, endsAtAnswers: Bool) {
        self.settings = settings
        self.spare = spare
        self.endsAtAnswers = endsAtAnswers
        self.jobs = jobs
        outcomes = Array(repeating: nil, count: jobs.count)
        timelines = Array(repeating: .init(), count: jobs.count)
        queue = Array(jobs.indices.reversed())
        executable = settings.program
        parallelism = max(1, settings.parallelism ?? ProcessInfo.processInfo.activeProcessorCount)
    }

    mutating func run() {
        while outcomes.contains(where: { $0 == nil }) || !children.isEmpty {
            if let reason = unavailable {
                for index in queue + isolatedQueue { outcomes[index] = .unavailable(reason) }
                queue.removeAll()
                isolatedQueue.removeAll()
            }
            if children.isEmpty && queue.isEmpty && isolatedQueue.isEmpty {
                // Nothing left to run for the unanswered ones (cannot happen
                // unless a child vanished unseen); never loop forever.
                for index in outcomes.indices where outcomes[index] == nil {
                    outcomes[index] = .unavailable("the scan ended without an answer")
                }
                break
            }
            spawnAsNeeded()
            dispatch()
            if children.isEmpty { continue }
            waitForActivity()
        }
    }

    private var waiting: Int { queue.count + isolatedQueue.count }

    private mutating func spawnAsNeeded() {
        guard unavailable == nil else { return }
        let working = children.filter { !$0.retiring }.count
        let busy = children.filter { !$0.retiring && $0.job != nil }.count
        let wanted = min(parallelism, waiting + busy)
        var count = working
        while count < wanted {
            guard let child = spawn() else { return }
            children.append(child)
            count += 1
        }
    }

    private mutating func spawn() -> ScannerProcess? {
        let started: StartedScanner
        if let waiting = spare?.take() {
            started = waiting
        } else {
            do {
                started = try StartedScanner.start(executable, passing: settings.environment, adding: settings.childEnvironment())
            } catch {
                unavailable = error.reason
                return nil
            }
            // Started by this scan (a spare was started before it).
            spawned += 1
        }
        return ScannerProcess(pid: started.pid, channel: started.channel, errors: started.errors, deadline: .now + settings.timeout)
    }

    private mutating func dispatch() {
        for child in children where child.ready && child.job == nil && !child.retiring {
            let index: Int
            if child.isolated || child.served.count >= settings.filesPerProcess {
                retire(child)
                continue
            } else if child.served.isEmpty, let next = isolatedQueue.popLast() {
                child.isolated = true
                index = next
            } else if let next = queue.popLast() {
                index = next
            } else {
                // Idle with nothing for it (isolated work needs a fresh child).
                retire(child)
                continue
            }
            let timeout = settings.timeout.components
            let seconds = Int(timeout.seconds) + (timeout.attoseconds > 0 ? 1 : 0)
            let request = ScanRequest(request: index, file: jobs[index].file, cpuSeconds: seconds, activation: jobs[index].activation)
            child.job = index
            child.phase = nil
            child.stderr.removeAll()
            child.started = .now
            child.deadline = .now + settings.timeout
            let line: [UInt8] = (try? JSONEncoder().encode(request)).map { [UInt8]($0) + [0x0A] } ?? []
            // Stamped before the write: the woken child can take this thread's
            // core inside `send`, and that time is the child's, not a wait.
            timelines[index].requested = .now
            // A child that died meanwhile shows up as end-of-stream below.
            child.connection.write(line)
        }
    }

    /// End of stream on its channel makes a child exit; seen as such below.
    private func retire(_ child: ScannerProcess) {
        child.retiring = true
        child.deadline = .now + settings.timeout
        shutdown(child.channel, Int32(SHUT_WR))
    }

    private mutating func waitForActivity() {
        var descriptors: [pollfd] = []
        for child in children {
            descriptors.append(pollfd(fd: child.channel, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: child.errors, events: Int16(POLLIN), revents: 0))
        }
        let nearest = children.map(\.deadline).min()!
        let wait = min(Self.reapInterval, max(0, (nearest - .now).milliseconds))
        let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(wait.rounded(.up)))
        if ready < 0 && errno != EINTR { return }
        for (position, child) in children.enumerated() {
            if descriptors[position * 2 + 1].revents != 0 { drainErrors(child) }
            let channelEvent = descriptors[position * 2].revents
            if channelEvent != 0 {
                let open = readMessages(child)
                // Handed off after its answer: no longer this pool's to touch.
                if child.finished { continue }
                if !open {
                    ended(child, timedOut: false)
                    continue
                }
            }
            var status: Int32 = 0
            if waitpid(child.pid, &status, WNOHANG) == child.pid {
                // Gone, though its channel may be held open by what it forked.
                _ = readMessages(child)
                ended(child, timedOut: false, status: status)
                continue
            }
            if ContinuousClock.now >= child.deadline {
                ended(child, timedOut: !child.retiring || child.job != nil)
            }
        }
        children.removeAll { $0.finished }
    }

    /// Reads what is there; false at end of stream (the child is gone).
    private mutating func readMessages(_ child: ScannerProcess) -> Bool {
        let open = child.connection.receiveAvailable()
        while let line = child.connection.bufferedLine() {
            guard let message = try? JSONDecoder().decode(ScannerMessage.self, from: Data(line)) else { continue }
            handle(message, from: child)
        }
        return open
    }

    private mutating func handle(_ message: ScannerMessage, from child: ScannerProcess) {
        switch message.kind {
        case .hello:
            child.ready = message.protocolVersion == ScannerMessage.protocolVersion
            if child.ready, let policy = settings.policy { checkSandbox(message.sandbox, policy: policy, of: child) }
        case .phase:
            if message.request == child.job { child.phase = message.phase }
        case .result:
            guard let index = child.job, message.request == index else { return }
            if let plugin = message.plugin {
                outcomes[index] = .plugin(plugin)
            } else if let rejection = message.rejection {
                outcomes[index] = .rejected(code: rejection.code, reason: rejection.reason)
            }
            timelines[index].answered = .now
            child.job = nil
            child.served.append(index)
            child.deadline = .now + .seconds(3600)
            if endsAtAnswers && !outcomes.contains(where: { $0 == nil }) { endInBackground(child) }
        }
    }

    /// A scanner whose sandbox missed a layer: reported (best effort), or
    /// killed, and every scan unavailable (required).
    private mutating func checkSandbox(_ report: SandboxReport?, policy: SandboxPolicy, of child: ScannerProcess) {
        let unmet = (report ?? SandboxReport()).unmet(policy.neededLayers)
        guard !unmet.isEmpty else { return }
        let gap = unmet.map { "\($0.layer) (\($0.reason))" }.joined(separator: "; ")
        guard settings.sandbox?.enforcement == .required else {
            settings.onSandboxGap?(gap)
            return
        }
        unavailable = "its scanner's sandbox is required and did not reach \(gap): nothing was scanned. Fix: run on a kernel with Landlock and seccomp (docs/sandbox.md, \"Checking a machine\"), or make the scanner's sandbox best effort (ScannerSettings.sandbox)"
        child.ready = false
        kill(-child.pid, SIGKILL)
    }

    private func drainErrors(_ child: ScannerProcess) {
        guard child.errors >= 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(child.errors, $0.baseAddress, $0.count) }
            if count > 0 {
                child.stderr += chunk[0..<count]
                if child.stderr.count > Self.stderrCap { child.stderr.removeFirst(child.stderr.count - Self.stderrCap) }
                continue
            }
            if count == 0 {
                // Closed: every writer (the child, anything it forked) is gone.
                close(child.errors)
                child.errors = -1
            }
            return
        }
    }

    /// The child is gone, or is killed now: reap it and settle its jobs.
    private mutating func ended(_ child: ScannerProcess, timedOut: Bool, status known: Int32? = nil) {
        var status: Int32 = known ?? 0
        // Killed before waiting, so a child that closed its channel but lives
        // on can never block the host; a child already dead keeps its status.
        kill(-child.pid, SIGKILL)
        if known == nil { status = Self.reap(child.pid) }
        drainErrors(child)
        let ran = (ContinuousClock.now - child.started).milliseconds
        let tail = Self.lastLines(child.stderr)
        let abnormal = timedOut || WaitStatus.signaled(status) || WaitStatus.exitCode(status) != 0
        func quarantine(_ index: Int, phase: Quarantine.Phase?) {
            var quarantine = Quarantine(
                phase: phase ?? .dlopen, ending: .exit, signal: nil, exitStatus: nil,
                milliseconds: ran, stderrTail: tail, date: Quarantine.now())
            if timedOut {
                quarantine.ending = .timeout
            } else if WaitStatus.signaled(status) {
                quarantine.ending = .signal
                quarantine.signal = Signals.name(WaitStatus.signal(status))
            } else {
                quarantine.exitStatus = WaitStatus.exitCode(status)
            }
            outcomes[index] = .quarantined(quarantine)
        }
        func rescanAlone(_ indices: [Int]) {
            for index in indices {
                outcomes[index] = nil
                isolatedQueue.append(index)
            }
        }
        if !child.ready {
            let how = timedOut ? "did not answer within \(settings.timeout)" : WaitStatus.describe(status)
            unavailable = unavailable ?? "\(executable) \(how) before saying hello\(tail.isEmpty ? "" : ": \(tail.joined(separator: " | "))")"
            if let index = child.job { outcomes[index] = .unavailable(unavailable!) }
        } else if let index = child.job {
            if child.isolated || child.served.isEmpty {
                quarantine(index, phase: child.phase)
            } else {
                rescanAlone(child.served + [index])
            }
        } else if abnormal && !child.served.isEmpty {
            if child.isolated {
                // It answered, then died: something it left running killed it.
                quarantine(child.served[0], phase: .descriptor)
            } else {
                rescanAlone(child.served)
            }
        }
        close(child.channel)
        if child.errors >= 0 { close(child.errors) }
        child.errors = -1
        child.job = nil
        child.finished = true
    }

    /// Ends a child whose answers are all in: its process group killed now
    /// (as ``ended(_:timedOut:status:)`` does), the child reaped and its
    /// descriptors closed on a thread of their own.
    private func endInBackground(_ child: ScannerProcess) {
        child.finished = true
        let (pid, channel, errors) = (child.pid, child.channel, child.errors)
        kill(-pid, SIGKILL)
        startDetachedThread {
            _ = Self.reap(pid)
            close(channel)
            if errors >= 0 { close(errors) }
        }
    }

    /// Waits for the child `pid` to end; its status.
    private static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    static func lastLines(_ bytes: [UInt8], count: Int = 5) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").suffix(count).map {
            String($0.prefix(300))
        }
    }

}
