/// A file that passed every step of ``Admission``, in order: trusted, read
/// once, statically checked, matched to its lock entry, and copied. Only
/// ``Admission/admit(_:as:label:ownership:)`` makes one.
struct CheckedImage: Sendable {
    /// As found (in the plugins directory, or as given): for messages and records.
    let path: String
    /// The real path the bytes were read through, once the trust check walked it.
    let readPath: String
    /// The file's identity while it was read.
    let identity: FileIdentity
    /// ``ContentHash`` of the bytes read: what the registry cache remembers.
    let hash: UInt64
    /// Lowercase hex SHA-256 of the bytes read, when a lock file is in force
    /// or a lock file is being written.
    let sha256: String?
    /// What the ELF file says, for `inspect` and the cache.
    let details: PluginRecord.FileDetails
    /// The private copy of exactly those bytes: what a scanner or the host loads.
    let copy: String
    /// The lock file's entry for the file, under a lock file.
    let lockEntry: LockFile.Entry?
    let seal: Admission.Seal
}
