import PlugboardHost

/// Why a fleet command did nothing: a stable code (extensible: a struct,
/// not an enum), what it concerns (a reference, a blob, a path), the
/// reason and the fix. Signature checks keep the host's codes
/// (`lock-rollback`, `lock-expired`, ...), so an operator reads one list.
package struct FleetError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The registry cannot be reached (connection refused, DNS, TLS, time-out).
        package static let registryUnreachable = Code("registry-unreachable")
        /// A transfer stayed under the minimum rate for the stall window (a
        /// registry dripping bytes).
        package static let transferTooSlow = Code("transfer-too-slow")
        /// The registry refused the credentials, or asked for some and none were given.
        package static let registryAuthFailed = Code("registry-auth-failed")
        /// The registry answered with an unexpected HTTP status.
        package static let registryError = Code("registry-error")
        /// The tag or digest is not in the repository.
        package static let referenceNotFound = Code("reference-not-found")
        /// A blob's bytes do not have the digest they were fetched by.
        package static let blobDigestMismatch = Code("blob-digest-mismatch")
        /// A response is longer than its descriptor says (or than the limit).
        package static let responseTooLarge = Code("response-too-large")
        /// A manifest's bytes do not have the digest they were fetched by, or it cannot be read.
        package static let manifestInvalid = Code("manifest-invalid")
        /// No manifest for the platform asked for.
        package static let platformMissing = Code("platform-missing")
        /// The set has no signed lock file (publish without `--allow-unsigned`, or pull).
        package static let setUnsigned = Code("set-unsigned")
        /// A file of the set is not in its lock file, or does not have its hash there.
        package static let setMismatch = Code("set-mismatch")
        /// A new set signed with the sequence of the installed one but other bytes.
        package static let sequenceReused = Code("lock-sequence-reused")
        /// The record of the accepted sequence cannot be written: nothing is installed without it.
        package static let recordUnwritable = Code("sequence-record-unwritable")
        /// Writing the staged set or switching it in failed (disk full, permissions).
        package static let installFailed = Code("install-failed")
        /// `rollback` with no previous set kept.
        package static let noPreviousSet = Code("no-previous-set")
        /// An OCI image layout that cannot be read or written.
        package static let layoutInvalid = Code("layout-invalid")
        /// A redirect that cannot be followed (too many, or not http(s)).
        package static let redirectRefused = Code("redirect-refused")
    }

    package let code: Code
    /// The reference, blob, file or folder concerned.
    package let subject: String
    package let reason: String
    package let fix: String

    package init(_ code: Code, _ subject: String, reason: String, fix: String) {
        self.code = code
        self.subject = subject
        self.reason = reason
        self.fix = fix
    }

    package var description: String { "[\(code)] \(subject): \(reason); \(fix)" }

    /// A signature check's refusal, with the host's code.
    init(_ error: PluginLoadError) {
        self.init(Code(error.code.rawValue), error.path, reason: error.reason, fix: "nothing was installed")
    }
}
