// ServiceHost PLUGINS_DIR: a plugin host as one service of a ServiceGroup,
// its plugins' logs through swift-log. SIGTERM or SIGINT shuts it down
// gracefully; exit 0. Usage errors exit 64.
import Logging
import Plugboard
import PlugboardHost
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

// The shape docs/host-authors.md promises: PluginHost's `run()` is a Service's.
extension PluginHost: @retroactive Service {}

/// The host in a group whose graceful shutdown (SIGTERM) must end it:
/// `run()` ends on cancellation, so the group's graceful shutdown cancels it.
struct PluginHostService: Service {
    let host: PluginHost

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await host.run() }
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let plugins = arguments.first, plugins != "--help" else {
    print("usage: ServiceHost PLUGINS_DIR\n  runs a plugin host in a ServiceGroup until SIGTERM or SIGINT\n  exit: 0 stopped, 1 the host did not start, 64 usage")
    exit(arguments.first == "--help" ? 0 : 64)
}
LoggingSystem.bootstrap(StreamLogHandler.standardError)
let logger = Logger(label: "service-host")

// The swift-log bridge (docs/host-services.md, "Logging").
let pluginLogger = Logger(label: "plugins")
var configuration = PluginHost.Configuration(pluginsDirectory: plugins)
configuration.observability.logSink = LogSink(minimumLevel: .debug) { record in
    pluginLogger.log(level: Logger.Level(rawValue: "\(record.level)") ?? .info, "\(record.message)", metadata: ["plugin": "\(record.label)"])
}
let host = PluginHost(configuration: configuration)
host.declare(Commands.self)
do {
    try host.start()
} catch {
    logger.error("the host did not start: \(error)")
    exit(1)
}
logger.info("serving \(host.snapshot().count) plugin files from \(plugins)")
let group = ServiceGroup(services: [PluginHostService(host: host)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
try await group.run()
logger.info("stopped")
