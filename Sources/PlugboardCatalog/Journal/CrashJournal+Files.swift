@_spi(PlugboardHost) import Plugboard
import CPlugboardHost
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore

/// The journal's files: the note and the fault file, made, adopted, replaced when plugin code took the note's descriptor, removed.
extension CrashJournal {
    /// A note file (open, locked) and its fault file.
    struct Files {
        let fd: Int32
        let note: String
        let fault: String
        let identity: (device: UInt64, inode: UInt64)
    }

    static func createFiles(in directory: String) -> Files? {
        let name = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let temporary = "\(directory)/.\(name).tmp"
        let fault = "\(directory)/\(name).fault"
        let faultFD = Glibc.open(fault, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard faultFD >= 0 else { return nil }
        Glibc.close(faultFD)
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, flock(fd, LOCK_EX | LOCK_NB) == 0,
            rename(temporary, "\(directory)/\(name).note") == 0
        else {
            if fd >= 0 { Glibc.close(fd) }
            unlink(temporary)
            unlink(fault)
            return nil
        }
        return Files(fd: fd, note: "\(directory)/\(name).note", fault: fault, identity: (UInt64(info.st_dev), UInt64(info.st_ino)))
    }

    static func adopt(_ files: Files, into state: inout State) {
        state.fd = files.fd
        state.written = 0
        state.file = files.note
        state.faultFile = files.fault
        state.identity = files.identity
    }

    /// Removes the note and fault files and forgets them (the descriptor is
    /// the caller's to close, or not). The note is removed by name only
    /// while the name is still the file this journal made.
    static func removeFiles(_ state: inout State) {
        if let file = state.file, let identity = state.identity, let now = FileIdentity.of(path: file),
            now.device == identity.device, now.inode == identity.inode {
            unlink(file)
        }
        if let fault = state.faultFile { unlink(fault) }
        forgetFiles(&state)
    }

    static func forgetFiles(_ state: inout State) {
        state.fd = -1
        state.file = nil
        state.faultFile = nil
        state.identity = nil
    }

    /// Whether `fd` still is the note file this journal made.
    static func isNote(_ state: State) -> Bool {
        var info = stat()
        guard state.fd >= 0, let identity = state.identity, fstat(state.fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == identity.device && UInt64(info.st_ino) == identity.inode
    }

    /// Plugin code took the note's descriptor (closed it, or put a file of
    /// its own at its number): the number is no longer ours, so it is
    /// neither written nor closed. The old files go (what they say is stale:
    /// the lock went with the descriptor) and new ones take over.
    func replaceTakenFiles(_ state: inout State) -> Bool {
        Self.removeFiles(&state)
        guard let files = Self.createFiles(in: directory) else {
            if state.slot >= 0 { plugboard_journal_unregister(state.slot) }
            state.slot = -1
            return false
        }
        Self.adopt(files, into: &state)
        if state.slot < 0 || plugboard_journal_replace_files(state.slot, files.fd, files.fault) != 0 {
            if state.slot >= 0 { plugboard_journal_unregister(state.slot) }
            state.slot = plugboard_journal_register(files.fd, files.fault, hangThresholdNanoseconds)
        }
        return true
    }
}
