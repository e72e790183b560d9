import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Why a plugin file is kept out: its code crashed, exited or hung while
/// being scanned, or the host died while running it. Listed with the file
/// until the file changes or a rescan is asked for.
public struct Quarantine: Sendable, Equatable, Codable {
    /// Where the plugin's code was when it went wrong.
    public enum Phase: String, Sendable, Codable {
        /// The scanner's `dlopen`: the file's ELF constructors (C/C++
        /// `__attribute__((constructor))`, Swift metadata registration).
        case dlopen
        /// The scanner's call of `plugboard_entry`.
        case entry
        /// The scanner reading the descriptor the entry returned.
        case descriptor
        /// In the host (or in a scanner verifying a reload): loading it and `init(context:)`.
        case `init`
        /// In the host (or in a scanner verifying a reload): `activate()`.
        case activate
        /// In the host: a call the host journals (a command run by the CLI).
        case call
        /// In the host: its code faulted outside any call of it the host
        /// journals (a thread it started, a callback).
        case thread

        /// How the phase reads in a reason.
        package var label: String {
            switch self {
            case .dlopen: "constructor/dlopen"
            case .entry: "entry (plugboard_entry)"
            case .descriptor: "descriptor"
            case .`init`: "init"
            case .activate: "activate"
            case .call: "call"
            case .thread: "own thread or callback"
            }
        }
    }

    /// How it ended.
    public enum Ending: String, Sendable, Codable {
        /// Killed by a signal (``Quarantine/signal``).
        case signal
        /// Exited (``Quarantine/exitStatus``).
        case exit
        /// Ran past the scan's time limit and was killed.
        case timeout
        /// The host process died while the journal held a note for it;
        /// how it died cannot be known from the next start.
        case hostDied = "host-died"
        /// The host was stopped by a signal after the call had run past the
        /// hang threshold (``Quarantine/signal``): most likely a hang.
        case hostInterrupted = "host-interrupted"
        /// Isolated: its child crashed, exited or hung more often than the
        /// restart budget allows (``Quarantine/crashes`` in ``Quarantine/window`` seconds).
        case isolatedCrashes = "isolated-crashes"
    }

    /// What tied a host crash to this plugin.
    public enum Evidence: String, Sendable, Codable {
        /// The innermost plugin frame on the faulting thread's stack lay in
        /// this plugin's image.
        case frame
        /// No plugin frame was found: this plugin's journaled call (init,
        /// activate, a command) was the one running.
        case call
    }

    public package(set) var phase: Phase
    public package(set) var ending: Ending
    /// Signal name, e.g. `SIGABRT`.
    public package(set) var signal: String?
    public package(set) var exitStatus: Int32?
    /// How long its code ran, in milliseconds (nil when unknown).
    public package(set) var milliseconds: Double?
    /// The last lines it wrote to stderr while being scanned.
    public package(set) var stderrTail: [String]
    /// When it happened (ISO 8601, UTC).
    public package(set) var date: String
    /// For a host crash: what tied it to this plugin (nil for scans and hangs).
    public package(set) var evidence: Evidence? = nil
    /// For a hang found by interrupted starts: how many starts in a row were
    /// stopped during this plugin's init or activate (nil when one stop past
    /// the hang threshold was enough).
    public package(set) var interruptedStarts: Int? = nil
    /// For an isolated plugin over its restart budget: crashes counted, and
    /// the budget's window in seconds.
    public package(set) var crashes: Int? = nil
    public package(set) var window: Int? = nil
    /// The host's taint codes when this was recorded (see ``TaintEntry``):
    /// whether the process that crashed ran unverified code.
    public package(set) var taint: [String]? = nil

    package init(phase: Phase, ending: Ending, signal: String? = nil, exitStatus: Int32? = nil, milliseconds: Double? = nil, stderrTail: [String], date: String, evidence: Evidence? = nil, interruptedStarts: Int? = nil, crashes: Int? = nil, window: Int? = nil, taint: [String]? = nil) {
        self.phase = phase
        self.ending = ending
        self.signal = signal
        self.exitStatus = exitStatus
        self.milliseconds = milliseconds
        self.stderrTail = stderrTail
        self.date = date
        self.evidence = evidence
        self.interruptedStarts = interruptedStarts
        self.crashes = crashes
        self.window = window
        self.taint = taint
    }

    /// Stable code: `scan-crashed`, `scan-exited`, `scan-timeout`,
    /// `host-crashed`, `host-hung`, `isolated-crash-loop`.
    public var code: PluginLoadError.Code {
        switch ending {
        case .signal: "scan-crashed"
        case .exit: "scan-exited"
        case .timeout: "scan-timeout"
        case .hostDied: "host-crashed"
        case .hostInterrupted: "host-hung"
        case .isolatedCrashes: "isolated-crash-loop"
        }
    }

    /// What happened, when, and what to do.
    public var reason: String {
        "quarantined: \(account); fix the plugin and replace the file (a changed file is scanned again), or retry with `plugboard list --rescan`"
    }

    /// What happened and when, with the plugin's last output: the reason
    /// without the advice (a reload's verification gives its own).
    package var account: String {
        let duration = milliseconds.map { " after \(Self.format($0))" } ?? ""
        let what: String
        switch ending {
        case .signal:
            what = "crashed with \(signal ?? "a signal") in phase \(phase.label) while being scanned\(duration)"
        case .exit:
            what = "exited with status \(exitStatus ?? -1) in phase \(phase.label) while being scanned\(duration) (plugin code must not call exit)"
        case .timeout:
            what = "did not finish phase \(phase.label) within the scan's time limit and was killed\(duration)"
        case .hostDied:
            let how = signal.map { "crashed with \($0)" } ?? "died"
            let known = signal == nil ? "; exit status unknown: a process cannot record its own end" : ""
            let found = switch evidence {
            case .frame?: ", found by its frame on the faulting stack"
            case .call?: ", found by its running call"
            case nil: ""
            }
            what = "the host process \(how) during this plugin's \(phase.label)\(found) (noted \(date)\(known)), so the next start went on without it"
        case .hostInterrupted:
            let ran = milliseconds.map { " for \(Self.format($0))" } ?? ""
            if let starts = interruptedStarts {
                what = "the host was stopped by \(signal ?? "a signal") during this plugin's \(phase.label) in \(starts) starts in a row (the last after it had run\(ran), noted \(date)): it probably hangs"
            } else {
                what = "the host was stopped by \(signal ?? "a signal") after this plugin's \(phase.label) had run\(ran) (noted \(date)): it probably hangs"
            }
        case .isolatedCrashes:
            let how = signal.map { ", the last with \($0)" } ?? exitStatus.map { ", the last by exiting with status \($0)" } ?? ""
            what = "its isolated child crashed \(crashes ?? 0) times within \(window ?? 0) s\(how) (noted \(date)), more than its restart budget allows"
        }
        let output = stderrTail.isEmpty ? "" : "; its last output: \(stderrTail.joined(separator: " | "))"
        return what + output
    }

    /// Now, as ``date`` spells it.
    package static func now() -> String { UTCTimestamp.string(secondsSinceEpoch: time(nil)) }

    package static func format(_ milliseconds: Double) -> String {
        milliseconds >= 1000 ? "\((milliseconds / 100).rounded() / 10) s" : "\(Int(milliseconds.rounded())) ms"
    }
}

extension Quarantine.Ending {
    /// Decided by a host running the plugin, not by a scan: kept for every
    /// host of the state directory (``SharedQuarantines``).
    package var isDecidedByAHost: Bool {
        switch self {
        case .hostDied, .hostInterrupted, .isolatedCrashes: true
        case .signal, .exit, .timeout: false
        }
    }
}
