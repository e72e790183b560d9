import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// One log message from a plugin.
public struct LogRecord: Sendable {
    public let level: LogLevel
    /// The plugin id.
    public let label: String
    public let message: String
}

/// Where plugin log messages go. The default writes
/// `<level> [<plugin id>] <message>` lines to stderr.
public struct LogSink: Sendable {
    public let minimumLevel: LogLevel
    let write: @Sendable (LogRecord) -> Void

    public init(minimumLevel: LogLevel = .info, _ write: @escaping @Sendable (LogRecord) -> Void) {
        self.minimumLevel = minimumLevel
        self.write = write
    }

    public static let standardError = LogSink { record in
        let line = "\(record.level) [\(record.label)] \(record.message)\n"
        // One write(2) per line, so lines from several threads never interleave.
        _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
    }
}

/// The ``PluginLogger`` a plugin receives.
package struct HostLogger: PluginLogger {
    package let label: String
    let sink: LogSink

    package init(label: String, sink: LogSink) {
        self.label = label
        self.sink = sink
    }

    package func log(_ level: LogLevel, _ message: String) {
        guard level >= sink.minimumLevel else { return }
        sink.write(LogRecord(level: level, label: label, message: message))
    }
}
