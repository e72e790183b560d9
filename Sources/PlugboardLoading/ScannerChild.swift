import CPlugboardHost
import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardAdmission
import PlugboardServices

/// The scanner process: loads each file the host sends, reports the phase
/// it is in before each step, and answers with the descriptor's contents or
/// why the file was refused. If a plugin crashes, exits or hangs here, only
/// this process is lost; the host quarantines the file and starts another.
///
/// Entered from the C constructor in `scanner.c`, before the executable's
/// `main`, when the host started it with `PLUGBOARD_SCANNER=1`.
@_cdecl("plugboard_scanner_main")
@usableFromInline
func plugboardScannerMain(_ channel: Int32) -> Never {
    // A sandbox's constructor set them already (its seccomp layer refuses setting them).
    let limited = SandboxReport.current?.reached.contains("limits") ?? false
    var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
    if !limited { setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) }
    if plugboard_under_sanitizer() == 0 && !limited {
        // Far above what loading a plugin needs, far below what a runaway
        // allocation loop reaches before the time limit.
        var space = rlimit(rlim_cur: ScannerChild.addressSpaceLimit, rlim_max: ScannerChild.addressSpaceLimit)
        setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &space)
    }
    let connection = LineChannel(fd: channel)
    let child = ScannerChild(connection: connection)
    // A spare rehearses before its hello: the hello then means warm too, and
    // a rehearsal that failed shows as a scanner that did not start.
    if getenv(ScannerRehearsal.variable) != nil {
        unsetenv(ScannerRehearsal.variable)
        ScannerChild(connection: connection, rehearsing: true).rehearse()
    }
    child.send(ScannerMessage(kind: .hello, protocolVersion: ScannerMessage.protocolVersion, sandbox: SandboxReport.current))
    while let line = connection.readLine() {
        guard let request = try? JSONDecoder().decode(ScanRequest.self, from: Data(line)) else { break }
        child.scan(request)
    }
    _exit(0)
}

struct ScannerChild {
    static let addressSpaceLimit: rlim_t = 16 << 30

    let connection: LineChannel
    /// Encodes its messages but sends none (``rehearse()``).
    var rehearsing = false
    let environment = HostEnvironment.current

    func send(_ message: ScannerMessage) {
        guard let data = try? JSONEncoder().encode(message), !rehearsing else { return }
        connection.write(Array(data) + [0x0A])
    }

    /// A spare's scan of ``ScannerRehearsal``'s plugin before its hello: a
    /// request decoded, the plugin checked, created, activated, its answer
    /// encoded; nothing sent, nothing written. Whether it got as far as
    /// the plugin's activation.
    @discardableResult
    func rehearse() -> Bool {
        let request = ScanRequest(
            request: -1, file: ScannerRehearsal.path, cpuSeconds: 1, activation: .init(dataDirectory: "/nonexistent", settingsFile: nil))
        guard let line = try? JSONEncoder().encode(request), let decoded = try? JSONDecoder().decode(ScanRequest.self, from: line) else { return false }
        let result = ScannerRehearsal.image(environment: environment)
        return answer(decoded, with: result)
    }

    func scan(_ request: ScanRequest) {
        limitCPU(to: request.cpuSeconds)
        let result = PluginLoader.loadInChildProcess(request.file, reportedAs: request.file, environment: environment) { phase in
            send(ScannerMessage(kind: .phase, request: request.request, phase: phase))
        }
        answer(request, with: result)
    }

    /// Activates the plugin when the request asks for it, then answers.
    /// Whether it was activated.
    @discardableResult
    private func answer(_ request: ScanRequest, with result: Result<LoadedImage, PluginLoadError>) -> Bool {
        var activated = false
        if case let .success(image) = result, let activation = request.activation {
            activated = activate(image, activation, request: request.request)
        }
        var message = ScannerMessage(kind: .result, request: request.request)
        switch result {
        case let .success(image): message.plugin = ScannedPlugin(image.descriptor)
        case let .failure(error): message.rejection = .init(code: error.code.rawValue, reason: error.reason)
        }
        send(message)
        return activated
    }

    /// Creates, activates and deactivates a throwaway instance, announcing
    /// each phase first. A thrown error is not a crash: the host meets it
    /// when it loads the plugin itself and reports it then.
    /// Whether `activate` returned.
    private func activate(_ image: LoadedImage, _ check: ScanRequest.ActivationCheck, request: Int) -> Bool {
        let settings = check.settingsFile.map(HostSettings.load(from:)) ?? HostSettings()
        let services = HostServices(
            configuration: settings, dataDirectory: check.dataDirectory, logSink: LogSink(minimumLevel: .error) { _ in })
        send(ScannerMessage(kind: .phase, request: request, phase: .`init`))
        let context = services.context(for: image.descriptor, defaults: image.factory.defaultConfiguration)
        guard let instance = try? image.factory.make(context: context) else { return false }
        send(ScannerMessage(kind: .phase, request: request, phase: .activate))
        guard (try? instance.activate()) != nil else { return false }
        _ = instance.contributions()
        instance.deactivate()
        return true
    }

    /// RLIMIT_CPU counts the whole process: allow `seconds` more than used so far.
    private func limitCPU(to seconds: Int) {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let used = Int(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1
        var current = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &current)
        let wanted = rlim_t(used + max(1, seconds))
        var limit = rlimit(rlim_cur: min(wanted, current.rlim_max), rlim_max: current.rlim_max)
        setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &limit)
    }
}

/// Newline-delimited messages over a socket, written with `MSG_NOSIGNAL`
/// so a closed peer is an error, never a SIGPIPE.
package final class LineChannel {
    let fd: Int32
    private var buffer: [UInt8] = []

    package init(fd: Int32) { self.fd = fd }

    /// The next line without its newline, waiting for it; nil at end of
    /// stream or on error.
    package func readLine() -> [UInt8]? {
        while true {
            if let line = bufferedLine() { return line }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// The next whole line already received, without its newline.
    package func bufferedLine() -> [UInt8]? {
        guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
        defer { buffer.removeSubrange(...newline) }
        return Array(buffer[..<newline])
    }

    /// Takes in what has arrived, without waiting; false at end of stream
    /// or on an error (the peer is gone).
    package func receiveAvailable() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 8192)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        if count == 0 { return false }
        buffer += chunk[0..<count]
        return true
    }

    /// Whether every byte was written.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}
