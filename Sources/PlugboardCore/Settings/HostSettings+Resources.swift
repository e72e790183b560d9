/// The `"resources"` object of a plugin's entry in the settings file: the
/// bounds of its children (``PluginIsolation/Limits``; docs/sandbox.md, "Resources").
///
/// ```json
/// { "plugins": { "com.example.search": { "resources": { "memory": 268435456, "tasks": 64, "cpu": 0.5, "callsInFlight": 128 } } } }
/// ```
public struct ResourceSettings: Sendable, Equatable {
    /// Bytes of memory (``PluginIsolation/Limits/memory``); nil: the host's.
    public var memory: Int?
    /// Threads and processes (``PluginIsolation/Limits/tasks``); nil: the host's.
    public var tasks: Int?
    /// Cores (``PluginIsolation/Limits/cpuCores``); nil: the host's.
    public var cpuCores: Double?
    /// Calls in flight at once, per child (``PluginIsolation/Limits/callsInFlight``); nil: the host's.
    public var callsInFlight: Int?

    public init(memory: Int? = nil, tasks: Int? = nil, cpuCores: Double? = nil, callsInFlight: Int? = nil) {
        self.memory = memory
        self.tasks = tasks
        self.cpuCores = cpuCores
        self.callsInFlight = callsInFlight
    }

    /// `limits` with these bounds over the host's.
    package func applied(to limits: PluginIsolation.Limits) -> PluginIsolation.Limits {
        var limits = limits
        limits.memory = memory ?? limits.memory
        limits.tasks = tasks ?? limits.tasks
        limits.cpuCores = cpuCores ?? limits.cpuCores
        limits.callsInFlight = callsInFlight ?? limits.callsInFlight
        return limits
    }
}

extension HostSettings {
    mutating func resources(_ fields: [String: JSONValue], at path: String) -> ResourceSettings {
        var resources = ResourceSettings()
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            let keyPath = "\(path).\(key)"
            switch (key, value) {
            case let ("memory", .int(bytes)) where bytes >= 1 << 20:
                resources.memory = bytes
            case let ("tasks", .int(tasks)) where tasks >= 1:
                resources.tasks = tasks
            case let ("cpu", .int(cores)) where cores > 0:
                resources.cpuCores = Double(cores)
            case let ("cpu", .double(cores)) where cores >= 0.01:
                resources.cpuCores = cores
            case let ("callsInFlight", .int(calls)) where (1...1_024).contains(calls):
                resources.callsInFlight = calls
            case ("memory", _), ("tasks", _), ("cpu", _), ("callsInFlight", _):
                let wanted = ["memory": "bytes, at least 1048576", "tasks": "a whole number of threads and processes, at least 1", "cpu": "cores, at least 0.01",
                              "callsInFlight": "a whole number of calls, 1 to 1024"][key] ?? ""
                report(.error, "config-invalid-type", "must be \(wanted), found \(value.typeName)\(value.configValue.map { " \($0)" } ?? ""); the host's bound applies", keyPath: keyPath)
            default:
                report(.warning, "config-unknown-key", "unknown resource '\(key)' (known: memory, tasks, cpu, callsInFlight); ignored", keyPath: keyPath)
            }
        }
        return resources
    }
}
