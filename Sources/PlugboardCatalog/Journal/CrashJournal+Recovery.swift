@_spi(PlugboardHost) import Plugboard
import CPlugboardHost
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// Reading what a dead host's notes say: who to blame, or several suspects.
extension CrashJournal {
    /// Notes left by processes that have ended, removed as they are read.
    func recoverDeadNotes() -> [Recovered] {
        guard isUsable, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let own = state.withLock { $0.file }
        var recovered: [Recovered] = []
        for name in names.sorted() where name.hasSuffix(".note") {
            let path = "\(directory)/\(name)"
            if path == own { continue }
            let fd = Glibc.open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { Glibc.close(fd) }
            // Locked: its host is alive. Unlinked meanwhile: another start
            // recovered it first.
            var info = stat()
            guard flock(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &info) == 0, info.st_nlink > 0 else { continue }
            let bytes = readToEnd(fd) ?? []
            let faultPath = String(path.dropLast(".note".count)) + ".fault"
            let faultBytes = Self.read(faultPath)
            unlink(path)
            unlink(faultPath)
            if let found = Self.recover(notes: bytes, faults: faultBytes) { recovered.append(found) }
        }
        return recovered
    }

    static func read(_ path: String) -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { Glibc.close(fd) }
        return readToEnd(fd) ?? []
    }

    /// Who to blame from a dead host's note and fault files.
    static func recover(notes bytes: [UInt8], faults faultBytes: [UInt8]) -> Recovered? {
        var notes: [Note] = []
        var interruption: (Int32, Double, Bool)?
        for line in bytes.split(separator: 0x0A) {
            if line.first == UInt8(ascii: "c") {
                if let note = note(line) { notes.append(note) }
            } else {
                let words = String(decoding: line, as: UTF8.self).split(separator: " ")
                // "interrupted SIGNO MS PAST" (an older host wrote no PAST: it
                // noted only interruptions past the threshold).
                if words.count >= 3, words[0] == "interrupted", let signal = Int32(words[1]), let ms = Double(words[2]) {
                    interruption = (signal, ms, words.count < 4 || words[3] == "1")
                }
            }
        }
        // "fault SIGNO SECONDS[ NOTE]": the first fault is the one that ended
        // the process; its note, when present, names the image that faulted.
        var signal: Int32?
        var faulting: Note?
        if let line = faultBytes.split(separator: 0x0A).first {
            let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
            if parts.count >= 3, parts[0].elementsEqual("fault".utf8) {
                // The fault was in another host's plugin: this host's running
                // calls are innocent.
                if parts.count == 4, parts[3].elementsEqual("elsewhere".utf8) { return nil }
                signal = Int32(String(decoding: parts[1], as: UTF8.self))
                if parts.count == 4, var note = note(parts[3]) {
                    let seconds = Int(String(decoding: parts[2], as: UTF8.self)) ?? 0
                    // Its own call, if one was running, says the phase.
                    let phase = notes.last { $0.pluginID == note.pluginID }?.phase ?? .thread
                    note = Note(pluginID: note.pluginID, path: note.path, identity: note.identity, phase: phase,
                                date: UTCTimestamp.string(secondsSinceEpoch: seconds), interruptedStarts: nil, taint: note.taint)
                    faulting = note
                }
            }
        }
        if let faulting {
            return Recovered(note: faulting, evidence: .frame, signal: signal, interruption: nil)
        }
        // Starts run side by side: with the init or activate of several
        // plugins open and no frame naming one (SIGKILL, an OOM kill, exit(),
        // a thread of its own), the newest note is not the code that died.
        let starting = notes.filter { $0.phase == .`init` || $0.phase == .activate }
        if interruption == nil, Set(starting.map(\.pluginID)).count > 1 {
            var latest: [String: Note] = [:]
            for note in starting { latest[note.pluginID] = note }
            let suspects = latest.values.sorted { $0.pluginID < $1.pluginID }
            return Recovered(note: suspects[0], evidence: .call, signal: signal, interruption: nil, suspects: suspects)
        }
        // Notes are written oldest first. An interruption was judged on the
        // oldest init or activate (see `time`): blame that one. A crash: when
        // calls nest (a journaled call activating another plugin), the newest
        // is the code that was running: blame that one only.
        // A crash under way when a SIGINT/SIGTERM came is a crash, not a hang.
        if signal != nil { interruption = nil }
        let hung = interruption == nil ? nil : notes.first { $0.phase != .call }
        guard let blamed = hung ?? notes.last else { return nil }
        return Recovered(note: blamed, evidence: .call, signal: signal, interruption: hung == nil ? nil : interruption)
    }
}
