@_spi(PlugboardHost) import Plugboard

/// A route's request and response as they cross to and from a child: a
/// 4-byte little-endian length, a compact-coded head (all but the body),
/// then the body's bytes as they are, so a large body is copied once, not
/// coded byte by byte.
package enum RouteWire {
    /// The request without its body, with the host's match of the path.
    private struct RequestHead: Codable {
        var parameterNames: [String]
        var parameterValues: [String]
        var method: String
        var path: String
        var parameters: [String: String]
        var headers: [RouteHeader]
    }

    private struct ResponseHead: Codable {
        var status: Int
        var headers: [RouteHeader]
    }

    package static func request(_ request: RouteRequest, match: RouteMatch) -> [UInt8] {
        frame(RequestHead(
            parameterNames: match.parameterNames, parameterValues: match.parameterValues,
            method: request.method, path: request.path, parameters: request.parameters, headers: request.headers), body: request.body)
    }

    /// The request, and the match it carries for `pattern`; nil when the bytes are not a request.
    package static func request(from bytes: ArraySlice<UInt8>, pattern: String) -> (RouteMatch, RouteRequest)? {
        guard let (head, body) = split(bytes, as: RequestHead.self), head.parameterNames.count == head.parameterValues.count else { return nil }
        let match = RouteMatch(path: head.path, pattern: pattern, parameterNames: head.parameterNames, parameterValues: head.parameterValues)
        return (match, RouteRequest(method: head.method, path: head.path, parameters: head.parameters, headers: head.headers, body: Array(body)))
    }

    package static func response(_ response: RouteResponse) -> [UInt8] {
        frame(ResponseHead(status: response.status, headers: response.headers), body: response.body)
    }

    package static func response(from bytes: ArraySlice<UInt8>) -> RouteResponse? {
        guard let (head, body) = split(bytes, as: ResponseHead.self) else { return nil }
        return RouteResponse(status: head.status, headers: head.headers, body: Array(body))
    }

    private static func frame(_ head: some Encodable, body: [UInt8]) -> [UInt8] {
        // Strings and integers only: the compact encoder cannot fail on them.
        let encoded = (try? CompactEncoder().encode(head)) ?? []
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + encoded.count + body.count)
        withUnsafeBytes(of: UInt32(encoded.count).littleEndian) { bytes += $0 }
        bytes += encoded
        bytes += body
        return bytes
    }

    private static func split<Head: Decodable>(_ bytes: ArraySlice<UInt8>, as type: Head.Type) -> (Head, ArraySlice<UInt8>)? {
        guard bytes.count >= 4 else { return nil }
        let base = bytes.startIndex
        let length = Int(bytes.littleEndian(at: base, count: 4))
        guard length <= bytes.count - 4, let head = try? CompactDecoder().decode(type, from: Array(bytes[(base + 4)..<(base + 4 + length)])) else {
            return nil
        }
        return (head, bytes[(base + 4 + length)...])
    }
}

extension RouteWire {
    /// Why a child's response is no HTTP response a server may pass on
    /// (nil: it is one): a status outside 100...599, a header name that is
    /// not an HTTP token, a value with CR, LF or NUL (response splitting).
    package static func problem(with response: RouteResponse) -> String? {
        guard (100...599).contains(response.status) else { return "status \(response.status) is not an HTTP status" }
        for header in response.headers {
            guard !header.name.isEmpty, header.name.utf8.allSatisfy(isTokenByte) else {
                return "header name '\(header.name.prefix(40))' is not an HTTP token"
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                return "the value of header \(header.name) holds CR, LF or NUL"
            }
        }
        return nil
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
