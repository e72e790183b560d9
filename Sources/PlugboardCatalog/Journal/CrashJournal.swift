@_spi(PlugboardHost) import Plugboard
import CPlugboardHost
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Notes, on disk, which plugin the host is running code of (init, activate,
/// a journaled call), so that if the process dies there, the next start
/// quarantines that plugin instead of crashing again (JUCE's "dead man's
/// pedal").
///
/// One note file per host under `<cache>/journal/`, locked with `flock`
/// while the host keeps it: a locked note belongs to a live host and is left
/// alone; an unlocked one belongs to a process that ended, and its content
/// (if any) names the plugin that was running. A call that returns clears
/// its note, and so does a clean stop (``PluginHost/shutdown()``, or a
/// handled SIGINT/SIGTERM, see below, arriving within the hang threshold of
/// the call's start).
///
/// Beside the note, a fault file: the fault handler (`fault.c`) writes the
/// signal there and, when the innermost plugin frame on the faulting stack
/// lies in a plugin image registered with ``registerImage(_:note:)``, that
/// plugin (evidence `frame`); without one, the running call's note is the
/// evidence (`call`). What it cannot know: how a process died without a
/// catchable signal (the next start says "exit status unknown"). A host
/// stopped by SIGINT/SIGTERM during an init or activate keeps the note,
/// marked with the signal, the time and whether it ran past the hang
/// threshold, so the next start quarantines the plugin as `host-hung` (past
/// it, or the second start in a row stopped there). A journaled call (a
/// command may run long on purpose) is cleared instead.
///
/// Plugin code may close any descriptor and reopen its number: the note's
/// descriptor is written only while it still is the note file (checked
/// before each write), and a taken one is left to the plugin.
///
/// Each journal is its host's own: it registers its note file in a slot of
/// its own in the table the SIGINT/SIGTERM handler walks (`journal.c`), with
/// its own hang threshold, so several hosts in one process each keep a
/// working journal. No journal touches the process's signals: the handler is
/// installed only by ``installSignalHandlers()`` (a host configured with
/// `handlesInterruptSignals`), and a host that handles the signals itself
/// calls ``interrupted(signal:)`` on its way out. A host that does neither
/// and is stopped by a signal leaves its note as a crash would.
package final class CrashJournal: Sendable {
    package struct Note: Sendable, Codable, Equatable {
        let pluginID: String
        let path: String
        let identity: FileIdentity?
        let phase: Quarantine.Phase
        let date: String
        /// How many starts in a row before this one were stopped during this
        /// plugin's init or activate (before the hang threshold): the count
        /// lives only in notes, so a start that gets through clears it.
        var interruptedStarts: Int? = nil
        /// The host's taint codes when the note was written.
        var taint: [String]? = nil

        package init(pluginID: String, path: String, identity: FileIdentity? = nil, phase: Quarantine.Phase, date: String, interruptedStarts: Int? = nil, taint: [String]? = nil) {
            self.pluginID = pluginID
            self.path = path
            self.identity = identity
            self.phase = phase
            self.date = date
            self.interruptedStarts = interruptedStarts
            self.taint = taint
        }
    }

    /// A note as one line: its compact coding in base64 after a `c` (no
    /// space, no newline: the fault handler writes it as the last field of
    /// its line). Foundation's JSONEncoder took a fifth of an activation.
    static func line(_ note: Note) -> [UInt8]? {
        guard let bytes = try? CompactEncoder().encode(note) else { return nil }
        return [UInt8(ascii: "c")] + Array(Data(bytes).base64EncodedString().utf8)
    }

    /// The note of a line (a note an older host wrote as JSON is not read:
    /// host 3.0 writes this form, and a note lives one restart).
    static func note(_ line: some Collection<UInt8>) -> Note? {
        guard line.first == UInt8(ascii: "c"), let data = Data(base64Encoded: Data(line.dropFirst())) else { return nil }
        return try? CompactDecoder().decode(Note.self, from: [UInt8](data))
    }

    /// A note left by a process that ended while plugin code ran.
    struct Recovered: Sendable {
        let note: Note
        /// What tied the plugin to the crash: the faulting stack (`frame`) or
        /// the note of its running call (`call`).
        let evidence: Quarantine.Evidence
        /// The fatal signal, when the fault handler saw it.
        let signal: Int32?
        /// Set when a SIGINT/SIGTERM stopped the process during an init or
        /// activate; `pastThreshold` when it had run past the hang threshold.
        let interruption: (signal: Int32, milliseconds: Double, pastThreshold: Bool)?
        /// Several plugins were starting side by side and nothing tells which
        /// one crashed (no faulting frame of one): each one's latest note.
        /// None is to blame; they start one at a time next.
        var suspects: [Note] = []
    }

    let directory: String
    /// The host's hang threshold, as the signal side compares it.
    let hangThresholdNanoseconds: Int64
    /// False when the directory failed its trust check: no note is written or read.
    let isUsable: Bool
    struct State {
        var fd: Int32 = -1
        var file: String?
        /// The note file's identity: `fd` is written only while it still is
        /// that file (plugin code may close the number and reopen it on a file
        /// of its own).
        var identity: (device: UInt64, inode: UInt64)?
        /// Where the fault handler notes the plugin whose code faulted.
        var faultFile: String?
        /// This journal's slot in the signal handler's table; -1 when it has
        /// none (no note file yet, or the table was full).
        var slot: Int32 = -1
        var next = 0
        /// How many bytes the note file holds (see ``write(_:)``).
        var written = 0
        /// Running calls' notes, encoded once each (one line).
        var running: [Int: [UInt8]] = [:]
        /// When each running call started (CLOCK_MONOTONIC ns) and whether a
        /// hang counts for it (init, activate; not a journaled call).
        var starts: [Int: (nanoseconds: Int64, hangApplies: Bool)] = [:]
        /// When the oldest running call started (CLOCK_MONOTONIC ns, 0 when
        /// none) and whether a hang counts for it (init, activate): what
        /// ``interrupted(signal:)`` judges, with or without a slot.
        var callStarted: Int64 = 0
        var hangApplies = false
        /// Set by ``interrupted(signal:)``: the process is on its way out and
        /// the note file stays as that left it.
        var interrupted = false
    }
    let state = Mutex(State())
    /// The last note encoded and its line: an activation writes the same
    /// note around loading, the defaults and init (a third of its notes'
    /// cost was encoding them again).
    let lastLine = Mutex<(note: Note, line: [UInt8])?>(nil)
    /// Serialises installations, so the count each returns is exact.
    private static let installing = Mutex(())

    /// The host's taint, stamped on every note (nil: untainted).
    package let taint: HostTaint?

    package init(directory: String, hangThreshold: Duration, isUsable: Bool = true, taint: HostTaint? = nil) {
        self.taint = taint
        self.directory = directory
        self.isUsable = isUsable
        self.hangThresholdNanoseconds = Self.nanoseconds(hangThreshold)
    }

    /// A host dropped without ``close()`` gives its slot back (the table is
    /// fixed) and its note file with it: none of its calls can be running.
    deinit {
        state.withLock { release(&$0) }
    }

    /// `duration` in nanoseconds, clamped to 0...Int64.max.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        return whole.overflow || total.overflow ? .max : total.partialValue
    }

    /// Installs the process's SIGINT and SIGTERM handlers, where their action
    /// is still the default: on either, every registered journal clears the
    /// note of a call that is not hung (or is a `call`) and marks a hung init
    /// or activate, then the signal ends the process as it would have.
    /// Idempotent: a second call (or one after the host set its own handler)
    /// installs nothing. Returns how many handlers it installed.
    @discardableResult
    package static func installSignalHandlers() -> Int {
        installing.withLock { _ in Int(plugboard_journal_install_signal_handlers()) }
    }

    /// Tells this journal that a SIGINT/SIGTERM (`signal`) is stopping the
    /// process: what the installed handler does, for a host that handles the
    /// signals itself. Call it from normal code (not inside a signal handler:
    /// it takes a lock; a C handler calls `plugboard_journal_interrupted`),
    /// right before exiting: from then on the note file is left as this
    /// leaves it (calls starting or returning no longer rewrite it), until
    /// ``close()``.
    package func interrupted(signal: Int32) {
        state.withLock { state in
            state.interrupted = true
            // A crash under way keeps its notes, as the signal handler does.
            guard Self.isNote(state), !Self.faulted(state) else { return }
            plugboard_journal_note_interrupted(
                state.fd, state.callStarted, state.hangApplies ? 1 : 0, hangThresholdNanoseconds, signal)
        }
    }

    /// Runs `body` with a note saying plugin code of `note` is running.
    package func record<Result, Failure: Error>(_ note: Note, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let token = begin(note)
        defer { end(token) }
        return try body()
    }

    func begin(_ note: Note) -> Int? {
        var note = note
        note.taint = taint?.codes
        let line = encoded(note) + [0x0A]
        return state.withLock { state -> Int? in
            guard !state.interrupted, !Self.faulted(state), open(&state) else { return nil }
            state.next += 1
            state.running[state.next] = line
            state.starts[state.next] = (plugboard_monotonic_ns(), note.phase != .call)
            Self.time(&state)
            write(&state)
            return state.next
        }
    }

    /// `note`'s line (empty when it cannot be encoded).
    func encoded(_ note: Note) -> [UInt8] {
        if let last = lastLine.withLock({ $0 }), last.note == note { return last.line }
        let line = Self.line(note) ?? []
        lastLine.withLock { $0 = (note, line) }
        return line
    }

    func end(_ token: Int?) {
        guard let token else { return }
        state.withLock { state in
            state.running[token] = nil
            state.starts[token] = nil
            Self.time(&state)
            guard !state.interrupted, !Self.faulted(state) else { return }
            write(&state)
        }
    }

    /// What a signal judges, from the calls running now (with several on
    /// different threads): the oldest init or activate if there is one (a
    /// hang counts for it), else the oldest call (it never counts).
    static func time(_ state: inout State) {
        let hangable = state.starts.values.filter(\.hangApplies).map(\.nanoseconds).min()
        let oldest = state.starts.values.map(\.nanoseconds).min()
        guard let started = hangable ?? oldest else {
            state.callStarted = 0
            state.hangApplies = false
            plugboard_journal_call_ended(state.slot)
            return
        }
        state.callStarted = started
        state.hangApplies = hangable != nil
        plugboard_journal_call_started(state.slot, started, state.hangApplies ? 1 : 0)
    }

    /// A fault was noted: the process is crashing, and the notes stay as
    /// the crash left them (a thread still finishing its call must not clear
    /// them, nor a clean exit racing the crash).
    static func faulted(_ state: State) -> Bool {
        state.slot >= 0 && plugboard_journal_faulted(state.slot) != 0
    }

    /// This host's note and fault files, created on first use: the fault
    /// file, then the note under a `.tmp` name, locked, then renamed, so
    /// nobody ever sees the note unlocked. Registered in the signal
    /// handlers' table with this host's threshold.
    func open(_ state: inout State) -> Bool {
        if state.fd >= 0 { return true }
        guard isUsable, makeDirectories(directory) == nil, let files = Self.createFiles(in: directory) else { return false }
        Self.adopt(files, into: &state)
        // Full table: the note still protects against crashes; a signal
        // handler passes it by (interrupted(signal:) still works).
        state.slot = plugboard_journal_register(files.fd, files.fault, hangThresholdNanoseconds)
        return true
    }

    /// Registers a loaded plugin image: a fault whose innermost plugin frame
    /// lies in it is noted as that plugin's (phase `thread` unless a
    /// journaled call of it was running).
    package func registerImage(_ library: DynamicLibrary, note: Note) {
        var note = note
        note.taint = taint?.codes
        let line = Self.line(note) ?? []  // not `encoded`: this note comes between the same init notes
        state.withLock { state in
            guard !line.isEmpty, open(&state), state.slot >= 0 else { return }
            _ = line.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    plugboard_fault_register_image(library.handle, state.slot, $0.baseAddress!, $0.count)
                }
            }
        }
    }

    func write(_ state: inout State) {
        guard state.fd >= 0 else { return }
        if !Self.isNote(state) {
            guard replaceTakenFiles(&state) else { return }
        }
        // Usually one call at a time. The file keeps its size once it has
        // held its longest note: newlines (empty lines, which the reader
        // skips) cover what a longer note left, so a note is one write in
        // place. Changing the size (`ftruncate`, an append) costs the file
        // system a metadata update: 7% of an activation, for its four notes.
        let notes = state.running.keys.sorted().flatMap { state.running[$0]! }
        var bytes = notes
        if bytes.count < state.written { bytes += repeatElement(0x0A, count: state.written - bytes.count) }
        let wrote = bytes.isEmpty ? 0 : bytes.withUnsafeBytes { pwrite(state.fd, $0.baseAddress, $0.count, 0) }
        guard wrote == bytes.count else {
            // A write that failed (a full disk on a copy-on-write file system,
            // an I/O error) must not leave a returned call's note to blame:
            // empty the file, as clearing did before.
            state.written = ftruncate(state.fd, 0) == 0 ? 0 : max(state.written, bytes.count)
            return
        }
        state.written = bytes.count
        // Many calls ran at once: shrink back, after the notes that remain
        // were written over the old (the file never starts with a stale one).
        if state.written - notes.count > Self.paddingLimit, ftruncate(state.fd, off_t(notes.count)) == 0 {
            state.written = notes.count
        }
    }

    /// The most padding a cleared note file is written with before it is
    /// shrunk instead.
    private static let paddingLimit = 4096

    /// Removes this host's note file (a clean stop).
    package func close() {
        state.withLock { release(&$0) }
    }

    func release(_ state: inout State) {
        guard state.fd >= 0 else { return }
        // A fault being handled on another thread: wait for the crash to end
        // the process rather than exit 0 (returns at once when none is).
        plugboard_fault_await_end(30)
        let faulted = Self.faulted(state)
        let ours = Self.isNote(state)
        // Out of the table first: unregister returns once no handler can
        // still write to the fd, which may then be closed (and its number reused).
        plugboard_journal_unregister(state.slot)
        state.slot = -1
        let fd = state.fd
        // A crashing process keeps its notes for the next start.
        if faulted { Self.forgetFiles(&state) } else { Self.removeFiles(&state) }
        // Closed after the note is gone (its lock held until then); a number
        // plugin code took over is not ours to close.
        if ours { Glibc.close(fd) }
        state.callStarted = 0
    }

}
