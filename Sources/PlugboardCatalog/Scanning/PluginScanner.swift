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

/// Examines plugin files in scanner processes, never in the host.
///
/// A pool of children (one per core by default) is fed file after file over
/// a socket, like GStreamer's `gst-plugin-scanner`. A child that crashes,
/// exits or runs past the time limit costs only the file it was on: that
/// file is quarantined with the phase, the signal or status, the time it
/// ran and its last stderr lines, and a fresh child takes the rest. Each
/// child runs in its own process group, killed whole when it is done, so
/// nothing a plugin forks outlives its scan.
package struct PluginScanner: Sendable {
    package struct Job: Sendable {
        /// The private copy to load.
        let file: String
        /// Also create and activate the plugin in the child.
        package var activation: ScanRequest.ActivationCheck?

        package init(file: String, activation: ScanRequest.ActivationCheck? = nil) {
            self.file = file
            self.activation = activation
        }
    }

    package enum Outcome: Sendable {
        case plugin(ScannedPlugin)
        case rejected(code: String, reason: String)
        case quarantined(Quarantine)
        /// The scanner itself could not run; nothing is known about the file.
        case unavailable(String)
    }

    /// When one job was queued (the scan's start), when its request went to
    /// a ready child and when the child answered: how a verification splits.
    package struct Timeline: Sendable {
        var queued = ContinuousClock.now
        var requested: ContinuousClock.Instant?
        var answered: ContinuousClock.Instant?

        /// From the scan's start to the request: waiting for a ready child.
        package var waiting: Double? { requested.map { ($0 - queued).milliseconds } }
        /// From the request to the answer: the child's load (and activation).
        package var inChild: Double? { answered.flatMap { answered in requested.map { (answered - $0).milliseconds } } }
    }

    let settings: ScannerSettings

    package init(settings: ScannerSettings) {
        self.settings = settings
    }

    /// Scans `jobs`, in parallel; outcomes in job order, and how many
    /// scanner processes were started. A process waiting in `spare` is used
    /// first.
    ///
    /// `endingAtAnswers`: once every job is answered, the children are
    /// killed and reaped off this thread instead of waited for (a hot
    /// reload's verification: its scanner ends with `_exit`, so its end tells
    /// nothing more, and a process's end takes milliseconds).
    package func scan(
        _ jobs: [Job], spare: ScannerSpare? = nil, endingAtAnswers: Bool = false
    ) -> (outcomes: [Outcome], processes: Int, timelines: [Timeline]) {
        guard !jobs.isEmpty else { return ([], 0, []) }
        var pool = Pool(settings: settings, jobs: jobs, spare: spare, endsAtAnswers: endingAtAnswers)
        pool.run()
        return (pool.outcomes.map { $0 ?? .unavailable("the scan ended without an answer") }, pool.spawned, pool.timelines)
    }
}
