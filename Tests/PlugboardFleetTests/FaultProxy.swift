import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 between the tool and a registry that
/// forwards each request (one per connection) unless a rule for it says
/// otherwise: redirect a blob elsewhere, send a body without end, or stall
/// half-way and tell the test. Also what it was sent, to check which
/// headers reached it. Its accepting thread holds it until ``stop()``.
final class FaultProxy: Sendable {
    enum Rule: Sendable {
        case forward
        /// 307 to `origin` (another server) with the same path.
        case redirect(origin: String)
        /// 200 and bytes until the client hangs up.
        case endless
        /// Headers and half the blob from `file`, then `stalled` is signalled and the connection held.
        case stall(file: String)
        /// Headers, then the blob from `file` a byte at a time, 5 a second, until the client hangs up.
        case drip(file: String)
        /// The blob read from `file` of the registry's storage (an object store's answer).
        case serve(file: String)
        /// 202 to an upload's start, the upload to continue at `origin`.
        case uploadElsewhere(origin: String)
        /// 401 naming a Bearer token service at `realm`.
        case challenge(realm: String)
        /// A token service: `{"token": token}` to a request carrying `authorization`, else 401.
        case token(authorization: String, token: String)
    }

    let port: Int
    private let listener: Int32
    private let upstream: Int
    private let rule: @Sendable (_ method: String, _ path: String) -> Rule
    /// The request heads received, in order.
    let requests = Mutex<[String]>([])
    let stalled = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    init(upstream: Int, rule: @escaping @Sendable (String, String) -> Rule = { _, _ in .forward }) throws {
        self.upstream = upstream
        self.rule = rule
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 64) == 0 else { throw Fleet.Missing(path: "a listening socket") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        _ = length
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var address: String { "127.0.0.1:\(port)" }
    var heads: [String] { requests.withLock { $0 } }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if errno == EINTR { continue } else { return } }
            Thread.detachNewThread { [self] in handle(client) }
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        guard let (head, body) = Self.readRequest(client) else { return }
        requests.withLock { $0.append(head) }
        let first = head.split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = first.split(separator: " ")
        guard parts.count >= 2 else { return }
        let method = String(parts[0]), path = String(parts[1])
        switch rule(method, path) {
        case .forward:
            forward(head, body, to: client)
        case let .redirect(origin):
            // With a body, as Go's http.Redirect (distribution's) writes one: it is no part of the blob.
            let body = "<a href=\"\(origin)\(path)\">Temporary Redirect</a>.\n" + String(repeating: " ", count: 1024)
            Self.send(client, "HTTP/1.1 307 Temporary Redirect\r\nLocation: \(origin)\(path)\r\nContent-Type: text/html\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        case let .uploadElsewhere(origin):
            Self.send(client, "HTTP/1.1 202 Accepted\r\nLocation: \(origin)/v2/uploads/1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        case let .challenge(realm):
            Self.send(client, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"\(realm)\",service=\"x\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        case .endless:
            Self.send(client, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
            let chunk = [UInt8](repeating: 0x41, count: 64 << 10)
            while chunk.withUnsafeBytes({ write(client, $0.baseAddress, $0.count) }) > 0 {}
        case let .stall(file):
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            Self.send(client, "HTTP/1.1 200 OK\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n")
            _ = bytes.prefix(bytes.count / 2).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            stalled.signal()
            // Held until the client is gone.
            var byte: UInt8 = 0
            while read(client, &byte, 1) > 0 {}
        case let .drip(file):
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            Self.send(client, "HTTP/1.1 200 OK\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n")
            for byte in bytes {
                guard [byte].withUnsafeBytes({ write(client, $0.baseAddress, 1) }) == 1 else { return }
                // The pace of the fault, and the client hanging up ends it.
                var waiting = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                if poll(&waiting, 1, 200) > 0 { return }
            }
        case let .token(authorization, token):
            guard head.lowercased().contains("authorization: " + authorization.lowercased()) else {
                Self.send(client, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            let body = #"{"token": "\#(token)", "expires_in": 3600}"#
            Self.send(client, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        case let .serve(file):
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            Self.send(client, "HTTP/1.1 200 OK\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n")
            _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        }
    }

    private func forward(_ head: String, _ body: [UInt8], to client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(upstream).bigEndian
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { Self.send(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"); return }
        // One request per connection: the registry closes after answering.
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.lowercased().hasPrefix("connection:") }
        Self.send(server, lines.joined(separator: "\r\n").replacingOccurrences(of: "\r\n\r\n", with: "") + "\r\nConnection: close\r\n\r\n")
        _ = body.withUnsafeBytes { write(server, $0.baseAddress, $0.count) }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(server, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            guard buffer.withUnsafeBytes({ write(client, $0.baseAddress, count) }) == count else { return }
        }
    }

    private static func send(_ socket: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
    }

    /// The head (through the blank line) and a body of Content-Length bytes.
    private static func readRequest(_ client: Int32) -> (String, [UInt8])? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            if let end = data.indices.dropLast(3).first(where: { data[$0] == 13 && data[$0 + 1] == 10 && data[$0 + 2] == 13 && data[$0 + 3] == 10 }) {
                let head = String(decoding: data[..<(end + 4)], as: UTF8.self)
                var body = Array(data[(end + 4)...])
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while body.count < length {
                    let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                    guard count > 0 else { return nil }
                    body += buffer[..<count]
                }
                return (head, body)
            }
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            data += buffer[..<count]
        }
    }
}
