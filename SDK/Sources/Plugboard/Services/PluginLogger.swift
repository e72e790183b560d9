/// Severity of a log message, lowest first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

/// A logger the host hands a plugin; every message carries the plugin id.
///
/// By default the host writes `<level> [<plugin id>] <message>` lines to
/// stderr; a host can install its own sink.
public protocol PluginLogger: Sendable {
    /// Id of the plugin this logger is labelled with.
    var label: String { get }
    /// Logs `message` at `level`.
    func log(_ level: LogLevel, _ message: String)
}

extension PluginLogger {
    /// Logs at ``LogLevel/debug``.
    public func debug(_ message: String) { log(.debug, message) }
    /// Logs at ``LogLevel/info``.
    public func info(_ message: String) { log(.info, message) }
    /// Logs at ``LogLevel/warning``.
    public func warning(_ message: String) { log(.warning, message) }
    /// Logs at ``LogLevel/error``.
    public func error(_ message: String) { log(.error, message) }
}
