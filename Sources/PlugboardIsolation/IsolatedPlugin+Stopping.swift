import Dispatch
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Stopping the child, and asking it for its state before a hot reload.
extension IsolatedPlugin {
    /// How long a stop waits for a call in flight, then for the child to exit.
    static let stopGrace: Duration = .seconds(2)

    /// The plugin's saved state, for a hot reload; a failure says why there
    /// is none (`plugin-threw`: it does not adopt ReloadableState, or saving threw).
    package func savedState() -> Result<[UInt8], IsolatedCallError> {
        // Calls in flight get the stop's grace to finish, not more: the
        // reload (which holds the host's lifecycle) goes on without the state.
        guard slots.acquire(slots.count, until: .now + Self.stopGrace) else {
            return .failure(IsolatedCallError(.pluginTimeout, pluginID: pluginID, message: "calls in flight kept its state from being asked for"))
        }
        defer { slots.release(slots.count) }
        // The child's own time starts once it has the channel to itself.
        let deadline = ContinuousClock.now + (launch.policies.values.map(\.deadline).max() ?? IsolatedCallPolicy.standard.deadline)
        guard let child = state.withLock({ $0.phase == .running ? $0.children[0] : nil }) else {
            return .failure(IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its child is not running"))
        }
        do {
            let frame = try child.replies.exchange(IsolationProtocol.Kind.saveState.rawValue, sequence: nextSequence(), until: deadline) { _ in }
            if frame.kind == IsolationProtocol.Kind.state.rawValue { return .success(Array(frame.payload)) }
            return .failure(IsolatedCallError(.pluginThrew, pluginID: pluginID, message: String(decoding: frame.payload, as: UTF8.self)))
        } catch {
            switch error {
            // (Cancelled: only a suspended request is; this one waits on a thread.)
            case .timedOut, .sendTimedOut, .cancelled:
                return .failure(recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID, message: "saving its state ran past the deadline")))
            case .closed:
                return .failure(crashed(child, during: "saving its state"))
            case let .malformed(reason):
                return .failure(violation(child, reason))
            }
        }
    }

    /// Stops the child (each of a pool): end of its request stream (it deactivates the plugin
    /// and exits) once the calls in flight are answered, killed after
    /// `grace`. A call still in flight then fails with `plugin-unavailable`
    /// or `plugin-crashed`, never silently.
    package func stop(grace: Duration = IsolatedPlugin.stopGrace) {
        let wasRunning = state.withLock { state in
            defer { state.phase = .stopped }
            return state.phase == .running
        }
        if slots.acquire(slots.count, until: .now + grace) {
            defer { slots.release(slots.count) }
            let children = state.withLock { state in
                defer { state.children = state.children.map { _ in nil } }
                return state.children.compactMap { $0 }
            }
            // A pool's children stop side by side, in one grace.
            if children.count == 1 {
                children[0].stop(grace: grace)
            } else {
                let stopped = DispatchGroup()
                for child in children {
                    stopped.enter()
                    startDetachedThread(stackSize: 128 << 10) {
                        child.stop(grace: grace)
                        stopped.leave()
                    }
                }
                stopped.wait()
            }
        } else {
            // Calls still run (hung, maybe): kill the child; those calls
            // see its channel close. Reaped and closed here too, in case
            // they finished meanwhile (the close waits for a reader).
            for child in state.withLock({ $0.children.compactMap { $0 } }) { child.end() }
        }
        // A route a child registered as the stop began goes with the
        // services' retire every stop path of the lifecycle makes after this.
        discardSpare()
        for child in state.withLock({ state in defer { state.draining = [] }; return state.draining }) { child.end() }
        if wasRunning { announce(.stopped, pid: nil, "its child process was stopped by the host") }
    }
}
