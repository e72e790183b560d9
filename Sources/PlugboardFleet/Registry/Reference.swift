import PlugboardHost

/// Where a set is in a registry: `HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`,
/// as Docker and ORAS write it. Plain HTTP for `localhost` and 127.0.0.1
/// (and `http://` written before), HTTPS otherwise.
package struct Reference: Sendable, Equatable, CustomStringConvertible {
    package let host: String
    package let repository: String
    /// The tag, when given (default `latest` when neither is).
    package let tag: String?
    /// `sha256:HEX`, when given.
    package let digest: String?
    package let plainHTTP: Bool

    /// The manifest this names: the digest if given, else the tag.
    package var manifestName: String { digest ?? tag ?? "latest" }
    package var baseURL: String { (plainHTTP ? "http://" : "https://") + host }
    package var description: String { host + "/" + repository + (tag.map { ":" + $0 } ?? "") + (digest.map { "@" + $0 } ?? "") }

    package init(host: String, repository: String, tag: String?, digest: String?, plainHTTP: Bool) {
        self.host = host
        self.repository = repository
        self.tag = tag
        self.digest = digest
        self.plainHTTP = plainHTTP
    }

    /// The same repository at `digest`.
    package func at(_ digest: String) -> Reference {
        Reference(host: host, repository: repository, tag: nil, digest: digest, plainHTTP: plainHTTP)
    }

    /// Parses `text`; why not when it is not a reference.
    package static func parse(_ text: String, plainHTTP: Bool = false) -> Result<Reference, FleetError> {
        func refuse(_ why: String) -> Result<Reference, FleetError> {
            .failure(FleetError(.init("reference-invalid"), text, reason: why,
                fix: "write HOST[:PORT]/REPOSITORY[:TAG] or HOST[:PORT]/REPOSITORY@sha256:HEX, for example registry.example.com/plugins/checkout:stable"))
        }
        var rest = Substring(text)
        var plain = plainHTTP
        if rest.hasPrefix("http://") { plain = true; rest = rest.dropFirst(7) } else if rest.hasPrefix("https://") { rest = rest.dropFirst(8) }
        if rest.hasPrefix("oci://") { rest = rest.dropFirst(6) }
        guard let slash = rest.firstIndex(of: "/") else { return refuse("no repository after the host") }
        let host = String(rest[..<slash])
        var path = rest[rest.index(after: slash)...]
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) }) else { return refuse("'\(host)' is not a registry host") }
        var digest: String?
        if let at = path.firstIndex(of: "@") {
            let value = String(path[path.index(after: at)...])
            guard Digest.isValid(value) else { return refuse("'\(value)' is not a sha256: digest (sha256: and 64 lowercase hex digits)") }
            digest = value
            path = path[..<at]
        }
        var tag: String?
        if let colon = path.lastIndex(of: ":") {
            tag = String(path[path.index(after: colon)...])
            path = path[..<colon]
            guard let tag, !tag.isEmpty, tag.count <= 128, tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }),
                  tag.first != ".", tag.first != "-" else { return refuse("'\(tag ?? "")' is not a tag ([A-Za-z0-9_][A-Za-z0-9._-]{0,127})") }
        }
        let repository = String(path)
        let components = repository.split(separator: "/", omittingEmptySubsequences: false)
        guard !repository.isEmpty, components.allSatisfy({ component in
            !component.isEmpty && component.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || "._-".contains($0)) }
        }) else { return refuse("'\(repository)' is not a repository name (lowercase letters, digits, . _ - and /)") }
        // The host alone, exactly: localhost.example.com is not local.
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        let local = ["localhost", "127.0.0.1", "[::1]"].contains(name)
        return .success(Reference(host: host, repository: repository, tag: tag ?? (digest == nil ? "latest" : nil), digest: digest, plainHTTP: plain || local))
    }
}

/// `sha256:HEX` digests, as OCI writes them.
package enum Digest {
    package static func isValid(_ text: String) -> Bool {
        guard text.hasPrefix("sha256:") else { return false }
        let hex = text.dropFirst(7)
        return hex.count == 64 && hex.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    package static func of<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String { "sha256:" + SHA256.hex(bytes) }

    /// The hex part.
    package static func hex(_ digest: String) -> String { String(digest.dropFirst(7)) }
}
