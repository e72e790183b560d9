import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// A call past its deadline fails alone (docs/isolation.md, "Deadlines"):
/// its child is told to cancel it, then asked whether it still answers. A
/// child that does not answer within ``pingBound`` is killed, and every
/// call it fails says why (`plugin-killed-unresponsive`); one whose
/// cancelled call still runs after ``cancelGrace`` (a synchronous
/// requirement cannot be interrupted) is drained: new calls go to a new
/// child, the old one ends once its calls are done. Timeouts are counted
/// apart from crashes: a plugin that only times out is never quarantined.
extension IsolatedPlugin {
    /// How long a child has to answer a liveness ping.
    static let pingBound = Duration.seconds(1)
    /// How long a cancelled call may keep running before its child is drained.
    static let cancelGrace = Duration.seconds(1)

    /// The call `sequence` (named `call`) on `child` ran past `limit`.
    func timedOut(_ child: IsolatedChildProcess, sequence: UInt64, call: String, limit: Duration) {
        child.cancelCall(sequence)
        let watching = state.withLock { state -> Bool in
            state.timeouts += 1
            return state.watched.insert(child.pid).inserted
        }
        announce(.timedOut, pid: child.pid, "the call of \(call) ran past its deadline of \(limit) and failed alone; its child \(child.pid) was told to cancel it")
        // One watch per child at a time: a burst of timeouts asks once.
        guard watching else { return }
        let cause = "the call of \(call) ran past its deadline of \(limit)"
        startDetachedThread(stackSize: 128 << 10) { [self] in
            watch(child, asking: sequence, cause: cause, graceLeft: true)
        }
    }

    /// Pings `child` about call `sequence`: kills it if it does not answer,
    /// drains it if the call still runs after the grace, else leaves it be.
    private func watch(_ child: IsolatedChildProcess, asking sequence: UInt64, cause: String, graceLeft: Bool) {
        let answer = ping(child, about: sequence)
        if answer == true && graceLeft {
            // Asked again after the grace, off this thread.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.cancelGrace / .milliseconds(1)))) { [self] in
                startDetachedThread(stackSize: 128 << 10) { [self] in
                    watch(child, asking: sequence, cause: cause, graceLeft: false)
                }
            }
            return
        }
        state.withLock { _ = $0.watched.remove(child.pid) }
        switch answer {
        case nil:
            child.end(for: .pluginKilledUnresponsive, "not answering a liveness ping within \(Self.pingBound) after \(cause)")
        case true?:
            drain(child, because: "\(cause) and still runs \(Self.cancelGrace) after it was cancelled")
        case false?:
            break
        }
    }

    /// Whether `child` answers, and whether call `sequence` still runs in it (nil: no answer in time).
    func ping(_ child: IsolatedChildProcess, about sequence: UInt64) -> Bool? {
        guard let frame = try? child.replies.exchange(IsolationProtocol.Kind.ping.rawValue, sequence: nextSequence(), until: .now + Self.pingBound,
                                                      fill: { frame in withUnsafeBytes(of: sequence.littleEndian) { frame += $0 } }),
              frame.kind == IsolationProtocol.Kind.pong.rawValue else { return nil }
        return frame.payload.first == 1
    }

    /// New calls go to a new child (the restart of its member, or the
    /// spare); `child` ends once the calls it holds are done.
    private func drain(_ child: IsolatedChildProcess, because reason: String) {
        let drained = state.withLock { state -> Bool in
            guard state.phase == .running, let index = state.children.firstIndex(where: { $0 === child }) else { return false }
            state.children[index] = nil
            state.replacing.insert(index)
            state.draining.append(child)
            return true
        }
        guard drained else { return }
        announce(.timedOut, pid: child.pid, "its child \(child.pid) is drained: \(reason); new calls go to a new child, and it stops once its calls are done")
        endIfDrained(child)
    }

    /// Ends `child` if it is being drained and no call waits on it.
    func endIfDrained(_ child: IsolatedChildProcess) {
        guard child.replies.idle, state.withLock({ state in
            guard let index = state.draining.firstIndex(where: { $0 === child }) else { return false }
            state.draining.remove(at: index)
            return true
        }) else { return }
        child.end()
    }
}
