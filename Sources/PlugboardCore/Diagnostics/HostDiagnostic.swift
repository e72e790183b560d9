/// A problem the host noticed outside loading (configuration, events,
/// routes, composed screens, storage), kept so it can be shown and tested.
/// Each names where it happened: a file and key path, or a plugin.
public struct HostDiagnostic: Sendable, Equatable, Encodable, CustomStringConvertible {
    public enum Severity: String, Sendable, Encodable {
        /// A state change worth recording (an isolated plugin's child started or stopped).
        case info
        case warning, error
    }

    /// A stable, machine-readable code, such as `config-type-mismatch`: the
    /// same shape as ``PluginLoadError/Code`` (a struct, so codes can be
    /// added without breaking anyone who switches over them). Encoded as its
    /// string.
    public struct Code: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, Encodable {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    public let severity: Severity
    public let code: Code
    public let message: String
    /// File involved, if any.
    public var file: String? = nil
    /// Key path inside the file, e.g. `plugins.com.example.x.config.limit`.
    public var keyPath: String? = nil
    /// Plugin involved, if any.
    public var plugin: String? = nil

    public init(_ severity: Severity, code: Code, message: String, file: String? = nil, keyPath: String? = nil, plugin: String? = nil) {
        self.severity = severity
        self.code = code
        self.message = message
        self.file = file
        self.keyPath = keyPath
        self.plugin = plugin
    }

    public var description: String {
        var place = [file, keyPath.map { "at \($0)" }].compactMap { $0 }.joined(separator: " ")
        if place.isEmpty, let plugin { place = plugin }
        return "\(place.isEmpty ? "" : "\(place): ")\(message) [\(code)]"
    }
}
