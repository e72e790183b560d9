import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardLoading

/// A scanner process started ahead of need, so that a hot reload's
/// verification does not wait for one to start: most of a verification's
/// time is the dynamic loader preparing the host executable in the new
/// process, which a spare has done while the developer was typing.
///
/// Spares are started by one thread of the spare's own, alive as long as
/// the spare: a scanner child dies with the *thread* that started it
/// (`PR_SET_PDEATHSIG`), and a reload may run on a short-lived thread.
package final class ScannerSpare: Sendable {
    /// What the owner thread holds: not the spare itself, so a host never
    /// shut down still ends its spare and thread when it is released.
    private let core = Core()

    package init() {}

    /// Asks the owner thread to start one, unless one is waiting, and
    /// returns at once: the reload that asks has its answer already, and
    /// waiting for the spawn made every verification wait for the next
    /// one's process too. A verification that comes before the spare is
    /// ready starts a scanner of its own.
    package func fill(_ settings: ScannerSettings) { core.fill(settings) }

    /// Returns once every spare asked for so far was started (or could not
    /// be): for tests, and for a caller that must know the spare is there.
    func awaitFilled() { core.awaitFilled() }

    /// Returns once the spare asked for has rehearsed and said hello (its
    /// channel is readable; the hello stays for whoever takes it), or at
    /// `deadline`: what a dev loop's pause between two builds gives it.
    package func awaitReady(until deadline: ContinuousClock.Instant) {
        core.awaitFilled()
        guard let channel = core.waitingChannel else { return }
        var poller = pollfd(fd: channel, events: Int16(POLLIN), revents: 0)
        let left = max(0, Int64((ContinuousClock.now.duration(to: deadline) / .milliseconds(1)).rounded(.up)))
        while poll(&poller, 1, Int32(clamping: left)) < 0 && errno == EINTR {}
    }

    /// The waiting process, if it is still alive.
    func take() -> StartedScanner? { core.take() }

    /// The pid of the waiting process (for tests).
    var waitingPID: pid_t? { core.waitingPID }

    /// Ends the waiting process, reaps it, and ends the owner thread.
    package func discard() { core.discard() }

    deinit { core.discard() }
}

private final class Core: Sendable {
    private struct State {
        var waiting: StartedScanner?
        /// Settings of the spare asked for, until the owner thread started it.
        var request: ScannerSettings?
        var ownerStarted = false
        var stopping = false
        /// Requests the owner thread has not served yet.
        var pending = 0
    }

    private let state = Mutex(State())
    /// Wakes the owner thread (a request, or stop).
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the owner thread when a request is done (and for each
    /// request still pending when it stops).
    private let served = DispatchSemaphore(value: 0)
    private let ownerDone = DispatchSemaphore(value: 0)

    func fill(_ settings: ScannerSettings) {
        let startOwner = state.withLock { state -> Bool? in
            guard state.waiting == nil, !state.stopping else { return nil }
            state.request = settings
            state.pending += 1
            defer { state.ownerStarted = true }
            return !state.ownerStarted
        }
        guard let startOwner else { return }
        if startOwner { startDetachedThread { [self] in serve() } }
        wake.signal()
    }

    func awaitFilled() {
        // Each request served signals once, waited for or not: a signal left
        // from an earlier request only makes this look again.
        while state.withLock({ $0.pending > 0 }) { served.wait() }
    }

    /// The owner thread: starts the spares asked for, until ``discard()``.
    private func serve() {
        while true {
            wake.wait()
            let (request, stopping) = state.withLock { state in
                defer { state.request = nil }
                return (state.request, state.stopping)
            }
            if stopping {
                // Release every fill still waiting, then end.
                let waiting = state.withLock { state in defer { state.pending = 0 }; return state.pending }
                for _ in 0..<waiting { served.signal() }
                ownerDone.signal()
                return
            }
            if let request, state.withLock({ $0.waiting == nil }) {
                let started = try? StartedScanner.start(
                    request.program, passing: request.environment, adding: request.childEnvironment(), rehearsing: true)
                // Discarded meanwhile: ended here, not left for nobody to reap.
                let unwanted = state.withLock { state -> StartedScanner? in
                    guard !state.stopping else { return started }
                    state.waiting = started
                    return nil
                }
                if let unwanted {
                    unwanted.close()
                    var status: Int32 = 0
                    waitpid(unwanted.pid, &status, 0)
                }
            }
            state.withLock { $0.pending -= 1 }
            served.signal()
        }
    }

    func take() -> StartedScanner? {
        guard let started = state.withLock({ state in defer { state.waiting = nil }; return state.waiting }) else { return nil }
        var status: Int32 = 0
        guard waitpid(started.pid, &status, WNOHANG) == 0 else {
            started.close()
            return nil
        }
        return started
    }

    var waitingPID: pid_t? { state.withLock { $0.waiting?.pid } }
    var waitingChannel: Int32? { state.withLock { $0.waiting?.channel } }

    /// Ends the waiting process (end of stream makes it exit), reaps it,
    /// and ends the owner thread.
    func discard() {
        let (started, owner) = state.withLock { state in
            defer {
                state.waiting = nil
                state.stopping = true
            }
            return (state.waiting, state.ownerStarted && !state.stopping)
        }
        if let started {
            started.close()
            var status: Int32 = 0
            waitpid(started.pid, &status, 0)
        }
        if owner {
            wake.signal()
            ownerDone.wait()
        }
    }
}
