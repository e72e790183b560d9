import PlugboardHost
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What each admission step costs on a file, for `make bench` (package
/// access: the benchmark's, not a host's).
package enum AdmissionCost {
    /// Nanoseconds per step, one sample each.
    package struct Sample: Sendable {
        /// Step 1 alone: what a warm discovery does per file.
        package var trust: Double
        /// Step 2: one `pread` of the whole file and its content hash.
        package var read: Double
        /// Step 3: ELF parsing and the static checks.
        package var staticChecks: Double
        /// SHA-256 of the bytes (only under a lock file, or for `plugboard lock`).
        package var sha256: Double
        /// Step 5: the private copy.
        package var copy: Double
        /// Every step through ``Admission/admit(_:as:label:ownership:)``, no lock file.
        package var admit: Double
    }

    /// One sample of each step on `file`, with private copies in `images`;
    /// nil if the file is not admitted.
    package static func measure(_ file: String, images: String) -> Sample? {
        let environment = HostEnvironment.current
        let admission = Admission(
            environment: environment, trust: .enforced, lock: nil, copies: PrivateCopies(directory: images), recordsSHA256: false)
        let candidate = PluginDirectory.candidate(at: file)
        var ownership = OwnershipCheck()
        // The folder verdicts a discovery shares between its files, made first.
        guard case let .success(readPath) = admission.trusted(candidate, ownership: &ownership) else { return nil }
        func nanoseconds(_ body: () -> Void) -> Double {
            let start = ContinuousClock.now
            body()
            let elapsed = (ContinuousClock.now - start).components
            return Double(elapsed.seconds) * 1e9 + Double(elapsed.attoseconds) / 1e9
        }
        var sample = Sample(trust: 0, read: 0, staticChecks: 0, sha256: 0, copy: 0, admit: 0)
        sample.trust = nanoseconds { _ = admission.trusted(candidate, ownership: &ownership) }
        var read: (identity: FileIdentity, bytes: [UInt8], hash: UInt64)?
        sample.read = nanoseconds { read = try? PluginFile.readBytes(readPath, reportedAs: file).get() }
        guard let read else { return nil }
        var problem: PluginLoadError?
        sample.staticChecks = nanoseconds {
            switch PluginFile.parse(read, reportedAs: file) {
            case let .success(parsed): problem = FileCompatibility.problem(in: parsed.image, file, environment)
            case let .failure(error): problem = error
            }
        }
        guard problem == nil else { return nil }
        sample.sha256 = nanoseconds { _ = SHA256.hex(read.bytes) }
        var copies: [String] = []
        sample.copy = nanoseconds { if let copy = try? admission.copies.write(read.bytes, label: "bench.so") { copies.append(copy) } }
        var admitted = false
        sample.admit = nanoseconds {
            if case let .success(image) = admission.admit(candidate, ownership: &ownership) {
                admitted = true
                copies.append(image.copy)
            }
        }
        for copy in copies { unlink(copy) }
        return admitted ? sample : nil
    }
}
