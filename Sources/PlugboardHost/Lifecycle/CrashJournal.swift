import CPlugboardHost
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Notes, on disk, which plugin the host is running code of (init, activate,
/// a journaled call), so that if the process dies there, the next start
/// quarantines that plugin instead of crashing again (JUCE's "dead man's
/// pedal").
///
/// One note file per process under `<cache>/journal/`, locked with `flock`
/// for the life of the process: a locked note belongs to a live host and is
/// left alone; an unlocked one belongs to a process that ended, and its
/// content (if any) names the plugin that was running. A call that returns
/// clears its note, and so does a clean stop (``PluginHost/shutdown()``,
/// or SIGINT/SIGTERM arriving within the hang threshold of the call's start).
///
/// What it cannot know: how the process died (a process cannot record its own
/// end; the next start says "exit status unknown"). What it cannot catch: a
/// hang, since nothing dies. A host stopped by SIGINT/SIGTERM while a call
/// has run past the hang threshold keeps the note, marked with the signal
/// and the time, so the next start quarantines the plugin as `host-hung`
/// (init and activate only: a command may run long on purpose).
///
/// The signal handler's state is the process's: with several hosts in one
/// process, the note of the host that last opened its journal is the one a
/// signal handles.
final class CrashJournal: Sendable {
    struct Note: Sendable, Codable, Equatable {
        let pluginID: String
        let path: String
        let identity: FileIdentity?
        let phase: Quarantine.Phase
        let date: String
    }

    /// A note left by a process that ended while plugin code ran.
    struct Recovered: Sendable {
        let note: Note
        /// Set when a SIGINT/SIGTERM stopped a call that ran past the threshold.
        let interruption: (signal: Int32, milliseconds: Double)?
    }

    let directory: String
    private let hangThreshold: Duration
    /// False when the directory failed its trust check: no note is written or read.
    let isUsable: Bool
    private struct State {
        var fd: Int32 = -1
        var file: String?
        var next = 0
        /// Running calls' notes, encoded once each (one JSON line).
        var running: [Int: [UInt8]] = [:]
    }
    private let state = Mutex(State())

    init(directory: String, hangThreshold: Duration, isUsable: Bool = true) {
        self.directory = directory
        self.isUsable = isUsable
        self.hangThreshold = hangThreshold
    }

    /// Runs `body` with a note saying plugin code of `note` is running.
    func record<Result, Failure: Error>(_ note: Note, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let token = begin(note)
        defer { end(token) }
        return try body()
    }

    private func begin(_ note: Note) -> Int? {
        let line = ((try? JSONEncoder().encode(note)).map { [UInt8]($0) } ?? []) + [0x0A]
        return state.withLock { state -> Int? in
            guard open(&state) else { return nil }
            state.next += 1
            state.running[state.next] = line
            if state.running.count == 1 {
                plugboard_journal_call_started(plugboard_monotonic_ns(), note.phase == .call ? 0 : 1)
            }
            write(state)
            return state.next
        }
    }

    private func end(_ token: Int?) {
        guard let token else { return }
        state.withLock { state in
            state.running[token] = nil
            if state.running.isEmpty { plugboard_journal_call_ended() }
            write(state)
        }
    }

    /// The process's note file, created on first use: `.tmp` name, locked,
    /// then renamed, so nobody ever sees it unlocked.
    private func open(_ state: inout State) -> Bool {
        if state.fd >= 0 { return true }
        guard isUsable, makeDirectories(directory) == nil else { return false }
        let name = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let temporary = "\(directory)/.\(name).tmp"
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(temporary, "\(directory)/\(name).note") == 0 else {
            Glibc.close(fd)
            unlink(temporary)
            return false
        }
        state.fd = fd
        state.file = "\(directory)/\(name).note"
        plugboard_journal_set_note(fd)
        let threshold = hangThreshold.components
        plugboard_journal_install_signal_handlers(threshold.seconds * 1_000_000_000 + threshold.attoseconds / 1_000_000_000)
        return true
    }

    private func write(_ state: State) {
        guard state.fd >= 0 else { return }
        // Usually one call at a time: an empty note is a truncate, nothing more.
        let bytes = state.running.keys.sorted().flatMap { state.running[$0]! }
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { pwrite(state.fd, $0.baseAddress, $0.count, 0) } }
        ftruncate(state.fd, off_t(bytes.count))
    }

    /// Removes this process's note file (a clean stop).
    func close() {
        state.withLock { state in
            guard state.fd >= 0 else { return }
            plugboard_journal_set_note(-1)
            if let file = state.file { unlink(file) }
            Glibc.close(state.fd)
            state.fd = -1
            state.file = nil
        }
    }

    /// Notes left by processes that have ended, removed as they are read.
    func recoverDeadNotes() -> [Recovered] {
        guard isUsable, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let own = state.withLock { $0.file }
        var recovered: [Recovered] = []
        for name in names.sorted() where name.hasSuffix(".note") {
            let path = "\(directory)/\(name)"
            if path == own { continue }
            let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { Glibc.close(fd) }
            // Locked: its host is alive.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            let bytes = readToEnd(fd) ?? []
            unlink(path)
            var notes: [Note] = []
            var interruption: (Int32, Double)?
            for line in bytes.split(separator: 0x0A) {
                if line.first == UInt8(ascii: "{") {
                    if let note = try? JSONDecoder().decode(Note.self, from: Data(line)) { notes.append(note) }
                } else {
                    let words = String(decoding: line, as: UTF8.self).split(separator: " ")
                    if words.count == 3, words[0] == "interrupted", let signal = Int32(words[1]), let ms = Double(words[2]) {
                        interruption = (signal, ms)
                    }
                }
            }
            // Notes are written oldest first; when calls nest (a journaled
            // call activating another plugin), the newest is the code that
            // was running: blame that one only.
            if let innermost = notes.last { recovered.append(Recovered(note: innermost, interruption: interruption)) }
        }
        return recovered
    }
}
