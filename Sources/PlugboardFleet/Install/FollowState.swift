import FoundationEssentials
import PlugboardHost

/// What `plugboard follow` remembers of a plugins directory between polls
/// and restarts: the digest it last installed (or found unchanged) and the
/// last it refused, so an unchanged tag costs one HEAD request and a
/// refused set is reported once, not at every poll. Kept in the hosts'
/// state directory, one file per plugins directory.
package struct FollowState: Codable, Sendable, Equatable {
    package var reference: String
    package var digest: String?
    package var refusedDigest: String?
    package var refusedCode: String?
    package var checked: Date

    package init(reference: String, digest: String? = nil, refusedDigest: String? = nil, refusedCode: String? = nil, checked: Date = Date()) {
        self.reference = reference
        self.digest = digest
        self.refusedDigest = refusedDigest
        self.refusedCode = refusedCode
        self.checked = checked
    }

    /// Refusals that are facts about a digest's bytes, whatever this host's
    /// settings: `follow` remembers them and skips the digest until the tag moves.
    package static func isVerdictOnTheSet(_ code: String) -> Bool {
        ["lock-rollback", "signature-invalid", "set-mismatch", "set-unsigned", "manifest-invalid"].contains(code)
    }

    package static func file(for directory: String, stateDirectory: String) -> String {
        "\(stateDirectory)/fleet/\(SHA256.hex(Array(PluginDirectory.absolutePath(directory).utf8)).prefix(24)).json"
    }

    package static func load(_ file: String) -> FollowState? {
        FileManager.default.contents(atPath: file).flatMap { try? JSONDecoder.iso8601.decode(FollowState.self, from: $0) }
    }

    /// Written whole and renamed into place.
    package func save(_ file: String) {
        let folder = String(file.split(separator: "/").dropLast().joined(separator: "/")).withLeadingSlash
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let data = try? JSONEncoder.iso8601.encode(self) { try? data.write(to: URL(fileURLWithPath: file), options: .atomic) }
    }
}
