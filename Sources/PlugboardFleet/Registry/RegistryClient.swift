import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// The OCI distribution calls a plugin set needs, against one repository:
/// probe and authenticate (Basic, or a Bearer token from the registry's
/// token service), manifests, blobs, uploads. The registry is untrusted
/// transport: everything fetched is checked against the digest it was
/// asked by, and capped at the size its descriptor gives.
package final class RegistryClient {
    package let reference: Reference
    private let http = HTTPClient()
    private let credentials: Credentials?
    /// The `Authorization` value that worked, reused until refused.
    private var authorization: String?
    /// Largest manifest or index accepted (the spec suggests 4 MiB).
    static let manifestLimit = 4 << 20

    /// `stallWindow`: seconds a transfer may stay under the minimum rate (1 KiB/s).
    package init(_ reference: Reference, credentials: Credentials? = nil, stallWindow: Int = 30) {
        self.reference = reference
        self.credentials = credentials ?? Credentials.find(for: reference.host)
        http.stallSeconds = stallWindow
    }

    package var progress: ((Int) -> Void)? {
        get { http.progress }
        set { http.progress = newValue }
    }

    private var repositoryURL: String { reference.baseURL + "/v2/" + reference.repository }

    /// The registry's own origin: the only one credentials are sent to or
    /// asked for by (a redirect target, an upload location elsewhere, get none).
    private var origin: String { HTTPClient.origin(of: reference.baseURL) }

    /// A request with authentication: on a 401 from the registry itself the
    /// challenge is answered once.
    private func send(_ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                      sink: HTTPClient.Sink = .memory(limit: RegistryClient.manifestLimit), timeout: Int = 120) throws(FleetError) -> HTTPClient.Response {
        var headers = headers
        let ours = HTTPClient.origin(of: url) == origin
        if ours, let authorization { headers["authorization"] = authorization }
        let response = try http.send(method, url, headers: headers, body: body, sink: sink, timeout: timeout)
        if response.status == 403 { throw refused(response.status) }
        guard response.status == 401 else { return response }
        guard ours, HTTPClient.origin(of: response.url) == origin else {
            throw FleetError(.registryAuthFailed, response.url, reason: "asks for credentials, but it is not the registry (\(origin)), so none are sent",
                fix: "check the registry's storage redirect settings")
        }
        authorization = try answer(response.headers["www-authenticate"] ?? "", for: url)
        headers["authorization"] = authorization
        if case let .file(descriptor, _) = sink { HTTPClient.rewind(descriptor) }
        let retried = try http.send(method, url, headers: headers, body: body, sink: sink, timeout: timeout)
        if retried.status == 401 || retried.status == 403 { throw refused(retried.status) }
        return retried
    }

    private func refused(_ status: Int) -> FleetError {
        FleetError(.registryAuthFailed, reference.description, reason: "the registry refused the credentials (HTTP \(status))",
            fix: "check PLUGBOARD_REGISTRY_USERNAME and PLUGBOARD_REGISTRY_PASSWORD, or the auths entry for \(reference.host) in ~/.docker/config.json")
    }

    /// The `Authorization` value answering `challenge`.
    private func answer(_ challenge: String, for url: String) throws(FleetError) -> String {
        let fix = "give credentials: PLUGBOARD_REGISTRY_USERNAME and PLUGBOARD_REGISTRY_PASSWORD, or `docker login \(reference.host)`"
        if challenge.lowercased().hasPrefix("basic") {
            guard let credentials else {
                throw FleetError(.registryAuthFailed, reference.description, reason: "the registry asks for a user name and password and none were found", fix: fix)
            }
            return credentials.basic
        }
        guard challenge.lowercased().hasPrefix("bearer") else {
            throw FleetError(.registryAuthFailed, reference.description, reason: "the registry asks for authentication Plugboard does not speak ('\(challenge.prefix(40))')", fix: "use Basic or Bearer token authentication")
        }
        let parameters = Self.challengeParameters(String(challenge.dropFirst(6)))
        guard let realm = parameters["realm"], realm.lowercased().hasPrefix("https://") || (realm.lowercased().hasPrefix("http://") && reference.plainHTTP) else {
            throw FleetError(.registryAuthFailed, reference.description, reason: "the Bearer challenge names no token service over HTTPS (credentials go to it)",
                fix: "check the registry's auth settings")
        }
        var query: [String] = []
        if let service = parameters["service"] { query.append("service=" + Self.percentEncoded(service)) }
        if let scope = parameters["scope"] { query.append("scope=" + Self.percentEncoded(scope)) }
        let tokenURL = realm + (query.isEmpty ? "" : (realm.contains("?") ? "&" : "?") + query.joined(separator: "&"))
        // The token service gets the credentials (or nobody's, for anonymous pulls).
        let response = try http.send("GET", tokenURL, headers: credentials.map { ["authorization": $0.basic] } ?? [:], sink: .memory(limit: 1 << 20), timeout: 60)
        guard response.status == 200 else {
            throw FleetError(.registryAuthFailed, realm, reason: "the token service answered HTTP \(response.status)", fix: fix)
        }
        struct Token: Decodable { let token: String?; let access_token: String? }
        guard let token = try? JSONDecoder().decode(Token.self, from: Data(response.body)), let value = token.token ?? token.access_token else {
            throw FleetError(.registryAuthFailed, realm, reason: "the token service's answer holds no token", fix: "check the token service")
        }
        return "Bearer " + value
    }

    static func challengeParameters(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].drop { $0 == "," || $0 == " " }.lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = String(rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            result[name] = value
        }
        return result
    }

    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || "-_.~".utf8.contains(byte) {
                result.append(Character(Unicode.Scalar(byte)))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    private func unexpected(_ response: HTTPClient.Response, _ what: String) -> FleetError {
        let excerpt = String(decoding: response.body.prefix(200), as: UTF8.self).filter { !$0.isNewline }
        return FleetError(.registryError, reference.description, reason: "\(what): HTTP \(response.status)\(excerpt.isEmpty ? "" : " (\(excerpt))")",
            fix: "check the registry (its logs say more); nothing was changed")
    }

    // MARK: manifests

    /// A manifest or index as fetched, checked: by digest, its bytes have
    /// that digest; by tag, the digest the registry names (if any) is theirs.
    package struct FetchedManifest {
        package let bytes: [UInt8]
        package let mediaType: String
        package let digest: String
    }

    package func manifest(_ name: String) throws(FleetError) -> FetchedManifest {
        let response = try send("GET", repositoryURL + "/manifests/" + name, headers: ["accept": MediaType.accepted])
        if response.status == 404 {
            throw FleetError(.referenceNotFound, reference.description, reason: "no manifest '\(name)' in \(reference.repository)", fix: "check the tag, or the digest `plugboard publish` printed")
        }
        guard response.status == 200 else { throw unexpected(response, "fetching manifest \(name)") }
        let digest = Digest.of(response.body)
        if Digest.isValid(name), digest != name {
            throw FleetError(.manifestInvalid, reference.description, reason: "the manifest fetched by \(name) has the digest \(digest): it was changed", fix: "the registry served other bytes than asked for; nothing was installed")
        }
        if let named = response.headers["docker-content-digest"], Digest.isValid(named), named != digest {
            throw FleetError(.manifestInvalid, reference.description, reason: "the registry names the manifest \(named) but its bytes have \(digest)", fix: "the registry served other bytes than it names; nothing was installed")
        }
        let mediaType = response.headers["content-type"].map { String($0.prefix { $0 != ";" }) } ?? MediaType.manifest
        return FetchedManifest(bytes: response.body, mediaType: mediaType, digest: digest)
    }

    /// The digest a tag points to now: one HEAD request (what `follow` polls).
    package func digest(of name: String) throws(FleetError) -> String {
        let response = try send("HEAD", repositoryURL + "/manifests/" + name, headers: ["accept": MediaType.accepted])
        if response.status == 404 {
            throw FleetError(.referenceNotFound, reference.description, reason: "no manifest '\(name)' in \(reference.repository)", fix: "check the tag (publish a set to it first)")
        }
        guard response.status == 200 else { throw unexpected(response, "asking for manifest \(name)") }
        if let named = response.headers["docker-content-digest"], Digest.isValid(named) { return named }
        return try manifest(name).digest
    }

    package func putManifest(_ bytes: [UInt8], mediaType: String, as name: String) throws(FleetError) {
        let response = try send("PUT", repositoryURL + "/manifests/" + name, headers: ["content-type": mediaType], body: bytes)
        guard response.status == 201 || response.status == 200 else { throw unexpected(response, "pushing manifest \(name)") }
    }

    // MARK: blobs

    package func hasBlob(_ digest: String) throws(FleetError) -> Bool {
        let response = try send("HEAD", repositoryURL + "/blobs/" + digest)
        if response.status == 404 { return false }
        guard response.status == 200 else { throw unexpected(response, "asking for blob \(digest)") }
        return true
    }

    /// Uploads `bytes` unless the registry has them: whether they were sent.
    @discardableResult
    package func pushBlob(_ bytes: [UInt8], digest: String) throws(FleetError) -> Bool {
        if try hasBlob(digest) { return false }
        let started = try send("POST", repositoryURL + "/blobs/uploads/")
        guard started.status == 202, let location = started.headers["location"] else { throw unexpected(started, "starting an upload") }
        let target = HTTPClient.resolve(location, against: repositoryURL)
        guard HTTPClient.origin(of: target) == origin else {
            throw FleetError(.redirectRefused, reference.description, reason: "the registry asked for the upload at \(HTTPClient.origin(of: target)), another origin",
                fix: "check the registry's settings; nothing was sent there")
        }
        let url = target + (target.contains("?") ? "&" : "?") + "digest=" + Self.percentEncoded(digest)
        let finished = try send("PUT", url, headers: ["content-type": "application/octet-stream"], body: bytes)
        guard finished.status == 201 else { throw unexpected(finished, "uploading blob \(digest)") }
        return true
    }

    /// Fetches the blob `descriptor` names into `descriptor` (the file),
    /// then checks its size and digest. Throws if either is wrong.
    package func fetchBlob(_ blob: Descriptor, into file: Int32, path: String) throws(FleetError) {
        // At least 16 KiB/s on average: a registry trickling bytes is cut off too.
        let response = try send("GET", repositoryURL + "/blobs/" + blob.digest, sink: .file(descriptor: file, limit: blob.size), timeout: 120 + blob.size / (16 << 10))
        if response.status == 404 {
            throw FleetError(.registryError, "\(reference.repository)@\(blob.digest)", reason: "the registry does not have this blob of the set (\(blob.title ?? "unnamed"))", fix: "publish the set again; nothing was installed")
        }
        guard response.status == 200 else { throw unexpected(response, "fetching blob \(blob.digest) (\(blob.title ?? "unnamed"))") }
        try BlobCheck.verify(file: file, path: path, against: blob)
    }
}

/// Whether a file holds exactly the blob a descriptor names.
package enum BlobCheck {
    package static func verify(file: Int32, path: String, against blob: Descriptor) throws(FleetError) {
        var info = stat()
        guard fstat(file, &info) == 0 else {
            throw FleetError(.installFailed, path, reason: "cannot read back what was fetched", fix: "check the staging folder beside the plugins directory")
        }
        guard Int(info.st_size) == blob.size else {
            throw FleetError(.blobDigestMismatch, blob.title ?? blob.digest, reason: "\(info.st_size) bytes arrived where the manifest says \(blob.size) (cut short or changed)", fix: "the registry served other bytes than were published; nothing was installed")
        }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, $0.count, offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            hasher.update(buffer[..<count])
            offset += off_t(count)
        }
        let digest = "sha256:" + Hex.encode(hasher.finalize())
        guard digest == blob.digest else {
            throw FleetError(.blobDigestMismatch, blob.title ?? blob.digest, reason: "the bytes fetched have the digest \(digest), not \(blob.digest)", fix: "the registry served other bytes than were published; nothing was installed")
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
