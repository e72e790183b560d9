import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Stopping the child, and asking it for its state before a hot reload.
extension IsolatedPlugin {
    /// How long a stop waits for a call in flight, then for the child to exit.
    static let stopGrace: Duration = .seconds(2)

    /// The plugin's saved state, for a hot reload; a failure says why there
    /// is none (`plugin-threw`: it does not adopt ReloadableState, or saving threw).
    func savedState() -> Result<[UInt8], IsolatedCallError> {
        let deadline = ContinuousClock.now + (launch.policies.values.map(\.deadline).max() ?? IsolatedCallPolicy.standard.deadline)
        // A call in flight gets the stop's grace to finish, not more: the
        // reload (which holds the host's lifecycle) goes on without the state.
        guard token.acquire(until: .now + Self.stopGrace) else {
            return .failure(IsolatedCallError(.pluginTimeout, pluginID: pluginID, message: "a call in flight kept its state from being asked for"))
        }
        defer { token.release() }
        guard let child = state.withLock({ $0.phase == .running ? $0.child : nil }) else {
            return .failure(IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its child is not running"))
        }
        let sequence = nextSequence()
        guard child.channel.send(IsolationProtocol.Kind.saveState.rawValue, sequence: sequence, payload: [], until: deadline) == .sent else {
            return .failure(crashed(child, during: "saving its state"))
        }
        do {
            let frame = try child.channel.receive(until: deadline)
            guard frame.sequence == sequence else { return .failure(violation(child, "a reply to another request")) }
            if frame.kind == IsolationProtocol.Kind.state.rawValue { return .success(Array(frame.payload)) }
            return .failure(IsolatedCallError(.pluginThrew, pluginID: pluginID, message: String(decoding: frame.payload, as: UTF8.self)))
        } catch {
            switch error {
            case .timedOut:
                return .failure(recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID, message: "saving its state ran past the deadline")))
            case .closed:
                return .failure(crashed(child, during: "saving its state"))
            case let .malformed(reason):
                return .failure(violation(child, reason))
            }
        }
    }

    /// Stops the child: end of its request stream (it deactivates the plugin
    /// and exits), killed after `grace`. A call in flight fails with
    /// `plugin-unavailable` or `plugin-crashed`, never silently.
    func stop(grace: Duration = IsolatedPlugin.stopGrace) {
        let wasRunning = state.withLock { state in
            defer { state.phase = .stopped }
            return state.phase == .running
        }
        if token.acquire(until: .now + grace) {
            defer { token.release() }
            if let child = state.withLock({ state in defer { state.child = nil }; return state.child }) {
                child.stop(grace: grace)
            }
        } else {
            // A call holds the channel (hung, maybe): kill the child; that
            // call sees its channel close and cleans up.
            state.withLock { $0.child }?.kill()
        }
        if wasRunning { announce(.stopped, pid: nil, "its child process was stopped by the host") }
    }
}
