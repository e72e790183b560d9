import FoundationEssentials
import PlugboardCommandLine
import PlugboardFleet
import PlugboardHost

/// What pull, follow and import share: fetch a set into staging, check it,
/// switch it in.
enum SetInstall {
    struct Report: Encodable {
        let ok = true
        let reference: String
        let digest: String
        let manifest: String
        let platform: String?
        let plugins: String
        /// installed, or unchanged (the same lock file is installed).
        let outcome: String
        let sequence: UInt64
        let channel: String
        let files: Int
        let bytes: Int
        /// Bytes fetched from the registry or layout; the rest were copied from the installed set.
        let bytesFetched: Int
        let filesReused: Int
    }

    static func run(_ name: String, from source: some SetSource, subject: String, platform: Platform,
                    installer: SetInstaller, json: Bool) throws(FleetError) -> Report {
        let progress = FleetOptions.progress(json: json)
        defer { FleetOptions.endProgress(json: json) }
        return try installer.withStaging { staging throws(FleetError) in
            // Admitted once, before the other files are fetched, and kept for the verdict.
            var admitted: (lock: [UInt8], signature: String, signed: SignedLock, files: [String: String])?
            let fetched = try SetFetch.fetch(name, from: source, platform: platform, into: staging, installed: installer.directory, subject: subject,
                                             admit: { lock, signature throws(FleetError) in
                let (signed, files) = try installer.admit(lock, signature: signature)
                admitted = (lock, signature, signed, files)
                return files
            }) { layer, position, count in
                progress("fetching \(position)/\(count) \(layer.title ?? layer.digest) (\(layer.size) bytes)")
            }
            // SetFetch admits the lock file before it returns a set.
            guard let admitted else { preconditionFailure("a set was fetched without its lock file admitted") }
            let outcome: String
            let signed: SignedLock
            switch try installer.verdict(lock: admitted.lock, signature: admitted.signature, admitted: (admitted.signed, admitted.files), files: fetched.files) {
            case let .unchanged(same):
                // Recorded too, if the record was missing or lower (a first pull with a floor).
                try installer.record(same, lock: admitted.lock)
                signed = same
                outcome = "unchanged"
            case let .install(new):
                try installer.switchIn(staging: staging, signed: new)
                signed = new
                outcome = "installed"
            }
            return Report(reference: subject, digest: fetched.digest, manifest: fetched.manifestDigest, platform: fetched.platform?.description,
                          plugins: installer.directory, outcome: outcome, sequence: signed.sequence, channel: signed.channel,
                          files: fetched.files.count, bytes: fetched.bytes, bytesFetched: fetched.bytesFetched, filesReused: fetched.reused)
        }
    }

    static func print(_ report: Report, json: Bool) {
        if json { JSONOutput.print(report); return }
        let what = report.outcome == "installed" ? "Installed" : "Unchanged:"
        Terminal.write("\(what) \(Terminal.safe(report.reference)) (\(report.digest.prefix(19))…, sequence \(report.sequence), channel \(Terminal.safe(report.channel)), "
            + "\(report.files) files) in \(Terminal.safe(report.plugins))\n")
    }
}
