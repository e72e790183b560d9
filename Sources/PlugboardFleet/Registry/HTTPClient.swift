import CPlugboardFleet
#if canImport(Glibc)
import Glibc
#endif

/// HTTP through libcurl, one request at a time on one handle (connections
/// are reused). Redirects are followed here, not by libcurl, so the rule is
/// in one place: credentials go only to the origin they were given for.
/// Every response is capped: a registry that sends more than asked is cut
/// off (`response-too-large`), one that stalls times out.
package final class HTTPClient {
    package struct Response {
        package let status: Int
        /// Lowercased names; the last value of each.
        package let headers: [String: String]
        package let body: [UInt8]
        /// The URL that answered, after redirects.
        package let url: String
    }

    /// Where a response's body goes.
    package enum Sink {
        /// Kept in memory, at most this many bytes.
        case memory(limit: Int)
        /// Written to this descriptor, at most this many bytes.
        case file(descriptor: Int32, limit: Int)
    }

    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    private let handle: UnsafeMutableRawPointer
    /// The window, in seconds, over which a transfer slower than
    /// ``minimumRate`` is abandoned.
    package var stallSeconds = 30
    /// Bytes a second a transfer must keep up over ``stallSeconds``.
    package var minimumRate = 1024
    /// Called with the bytes received so far of the current transfer.
    package var progress: ((Int) -> Void)?

    package init() {
        precondition(Self.initialised, "libcurl could not be initialised")
        // Only out of memory makes this fail.
        guard let handle = curl_easy_init() else { fatalError("libcurl could not make a handle") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// One request; follows up to 5 redirects (never sending `authorization`
    /// to another origin). Throws `registry-unreachable` when no answer came.
    /// `timeout`: seconds for the whole transfer (a trickle of bytes is no progress).
    package func send(_ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                      sink: Sink = .memory(limit: 4 << 20), timeout: Int? = nil) throws(FleetError) -> Response {
        var url = url
        var headers = headers
        let origin = Self.origin(of: url)
        for _ in 0...5 {
            let response = try perform(method, url, headers: headers, body: body, sink: sink, timeout: timeout)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"] else { return response }
            let next = Self.resolve(location, against: url)
            guard next.lowercased().hasPrefix("http://") || next.lowercased().hasPrefix("https://") else {
                throw FleetError(.redirectRefused, url, reason: "redirected to '\(location)', not an http(s) address", fix: "check the registry's storage redirect settings")
            }
            if Self.origin(of: next) != origin { headers["authorization"] = nil }
            if case let .file(descriptor, _) = sink { Self.rewind(descriptor) }
            url = next
        }
        throw FleetError(.redirectRefused, url, reason: "more than 5 redirects", fix: "check the registry's address and its storage redirect settings")
    }

    /// What a transfer collects through libcurl's callbacks.
    private final class Transfer {
        var sink: Sink
        var body: [UInt8] = []
        var received = 0
        var overflowed = false
        var writeFailed: Int32 = 0
        var headers: [String: String] = [:]
        /// The status line's code, once the headers came: only a 2xx body goes to the sink.
        var status = 0
        /// A non-2xx body stopped at 16 KiB (the answer is its status).
        var errorBodyCut = false
        var upload: [UInt8]
        var uploaded = 0
        var progress: ((Int) -> Void)?

        init(sink: Sink, upload: [UInt8]) {
            self.sink = sink
            self.upload = upload
        }
    }

    private func perform(_ method: String, _ url: String, headers: [String: String], body: [UInt8]?, sink: Sink, timeout: Int?) throws(FleetError) -> Response {
        curl_easy_reset(handle)
        let transfer = Transfer(sink: sink, upload: body ?? [])
        transfer.progress = progress
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        // No "Expect: 100-continue" round trip before uploads.
        list = curl_slist_append(list, "Expect:")
        defer { curl_slist_free_all(list) }
        url.withCString { _ = fleet_curl_set_pointer(handle, CURLOPT_URL, $0) }
        _ = fleet_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list)
        _ = fleet_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = fleet_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        // Below 1 KiB/s for the stall window is cut: a registry that drips a
        // byte a second costs the window, not as long as it likes.
        _ = fleet_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, minimumRate)
        _ = fleet_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, stallSeconds)
        _ = fleet_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        // HTTP(S) only, whatever a registry names (a file:// upload location would write a local file).
        _ = fleet_curl_set_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = fleet_curl_set_pointer(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        if let timeout { _ = fleet_curl_set_long(handle, CURLOPT_TIMEOUT, timeout) }
        switch method {
        case "GET": break
        case "HEAD": _ = fleet_curl_set_long(handle, CURLOPT_NOBODY, 1)
        default: method.withCString { _ = fleet_curl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) }
        }
        if body != nil {
            _ = fleet_curl_set_long(handle, CURLOPT_UPLOAD, 1)
            _ = fleet_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(transfer.upload.count))
            _ = fleet_curl_set_read(handle, { buffer, size, count, context in
                let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                let n = min(size * count, transfer.upload.count - transfer.uploaded)
                transfer.upload.withUnsafeBytes { bytes in
                    if n > 0, let buffer { _ = memcpy(buffer, bytes.baseAddress! + transfer.uploaded, n) }
                }
                transfer.uploaded += n
                return n
            }, context)
        } else if method == "POST" {
            _ = fleet_curl_set_long(handle, CURLOPT_POST, 1)
            _ = fleet_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, 0)
        }
        _ = fleet_curl_set_write(handle, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            let bytes = UnsafeRawBufferPointer(start: data, count: n)
            // A redirect's or an error's body is kept apart (a little of it, for the message).
            guard (200..<300).contains(transfer.status) else {
                transfer.body.append(contentsOf: bytes.prefix(max(0, 16 << 10 - transfer.body.count)))
                // Enough for the message: the rest is not waited for.
                guard transfer.body.count < 16 << 10 else { transfer.errorBodyCut = true; return 0 }
                return n
            }
            transfer.received += n
            switch transfer.sink {
            case let .memory(limit):
                guard transfer.received <= limit else { transfer.overflowed = true; return 0 }
                transfer.body.append(contentsOf: bytes)
            case let .file(descriptor, limit):
                guard transfer.received <= limit else { transfer.overflowed = true; return 0 }
                var offset = 0
                while offset < n {
                    let written = write(descriptor, bytes.baseAddress! + offset, n - offset)
                    if written < 0 { if errno == EINTR { continue }; transfer.writeFailed = errno; return 0 }
                    offset += written
                }
            }
            transfer.progress?(transfer.received)
            return n
        }, context)
        _ = fleet_curl_set_header_callback(handle, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
            if line.hasPrefix("HTTP/") {
                transfer.headers = [:]
                transfer.status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            }
            if transfer.headers.count < 200, let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }.reversed().drop { $0.isWhitespace }.reversed())
                transfer.headers[name] = value
            }
            return size * count
        }, context)
        let code = curl_easy_perform(handle)
        if transfer.overflowed {
            throw FleetError(.responseTooLarge, url, reason: "the response went on past the \(Self.limit(sink)) bytes expected", fix: "the registry sent more than the artifact's descriptor says: check the registry; nothing was installed")
        }
        if transfer.writeFailed != 0 {
            throw FleetError(.installFailed, url, reason: "cannot write what was received: \(String(cString: strerror(transfer.writeFailed)))", fix: "free space where the set is staged (beside the plugins directory); nothing was installed")
        }
        if transfer.errorBodyCut {
            return Response(status: transfer.status, headers: transfer.headers, body: transfer.body, url: url)
        }
        if code == CURLE_PARTIAL_FILE {
            throw FleetError(.blobDigestMismatch, url, reason: "the response ended before the length it announced (cut short)", fix: "the registry served less than was published; nothing was installed")
        }
        if code == CURLE_OPERATION_TIMEDOUT, transfer.status != 0 {
            throw FleetError(.transferTooSlow, url, reason: "the registry sent fewer than \(minimumRate) bytes a second for \(stallSeconds) s (\(transfer.received) bytes in all)",
                fix: "check the registry and the network between; nothing was installed, and `follow` tries again later")
        }
        guard code == CURLE_OK else {
            throw FleetError(.registryUnreachable, url, reason: String(cString: curl_easy_strerror(code)), fix: "check the address, that the registry runs and the network between; nothing was changed")
        }
        return Response(status: fleet_curl_status(handle), headers: transfer.headers, body: transfer.body, url: url)
    }

    private static func limit(_ sink: Sink) -> Int {
        switch sink {
        case let .memory(limit), let .file(_, limit): limit
        }
    }

    /// Empties a file a transfer writes to, for a retry.
    package static func rewind(_ descriptor: Int32) {
        _ = ftruncate(descriptor, 0)
        _ = lseek(descriptor, 0, SEEK_SET)
    }

    /// `scheme://host[:port]`, lowercased, without a default port (`:80`
    /// for http, `:443` for https): one origin however it is spelled.
    static func origin(of url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return url }
        let scheme = parts[0].lowercased()
        var host = parts[2].lowercased()
        let defaultPort = scheme == "http:" ? ":80" : scheme == "https:" ? ":443" : nil
        if let defaultPort, host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
        return scheme + "//" + host
    }

    /// `location` (absolute, or relative to `base`) as an absolute URL.
    static func resolve(_ location: String, against base: String) -> String {
        if let scheme = location.split(separator: "?", maxSplits: 1).first, scheme.contains("://") { return location }
        if location.hasPrefix("//") { return String(base.prefix { $0 != ":" }) + ":" + location }
        if location.hasPrefix("/") { return origin(of: base) + location }
        let folder = base.split(separator: "?").first.map { $0.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") } ?? base
        return folder + "/" + location
    }
}
