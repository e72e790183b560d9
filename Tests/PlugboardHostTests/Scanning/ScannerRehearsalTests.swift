import Foundation
@_spi(PlugboardHost) import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// A spare scanner rehearses a scan before it says hello:
/// the rehearsal goes through the checks a real plugin does, and sends
/// nothing of its own.
@Suite struct ScannerRehearsalTests {
    @Test func theRehearsalPluginPassesEveryCheckARealPluginDoes() throws {
        let result = ScannerRehearsal.image(environment: .current)
        guard case let .success(image) = result else {
            Issue.record("the rehearsal plugin was refused, so a spare would warm nothing: \(result)")
            return
        }
        #expect(image.descriptor.id == "plugboard.scanner.rehearsal")
        let services = HostServices(configuration: HostSettings(), dataDirectory: nil, logSink: LogSink { _ in })
        let instance = try image.factory.make(context: services.context(for: image.descriptor, defaults: [:]))
        try instance.activate()
        #expect(instance.contributions().isEmpty)
        instance.deactivate()
    }

    /// The rehearsal reaches the plugin's activation, and a spare is told
    /// to rehearse (a plain scanner is not).
    @Test func aSpareRehearsesUpToActivation() throws {
        #expect(ScannerChild(connection: LineChannel(fd: -1), rehearsing: true).rehearse())
        let plugboard = try Fixtures.executable("plugboard").path
        for rehearsing in [true, false] {
            let started = try StartedScanner.start(plugboard, rehearsing: rehearsing)
            defer {
                started.close()
                var status: Int32 = 0
                waitpid(started.pid, &status, 0)
            }
            // Its hello: the exec is done (until then the new process's
            // environment may not be readable yet).
            #expect(LineChannel(fd: started.channel).readLine() != nil)
            // The environment it was started with (unsetenv in the child does not change this).
            let environment = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(started.pid)/environ"))
            let variables = environment.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            #expect(variables.contains("\(ScannerRehearsal.variable)=1") == rehearsing, "rehearsing: \(rehearsing): \(variables)")
        }
    }

    /// Everything after its hello answers the host's request: had the
    /// rehearsal sent a message, it would come first on the channel.
    @Test func aRehearsingSpareSendsNothingOfItsOwnAndAnswersTheFirstRequest() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.copy(Fixtures.library("ReloadV1"), as: "libReload.so")
        let started = try StartedScanner.start(try Fixtures.executable("plugboard").path, rehearsing: true)
        defer {
            started.close()
            var status: Int32 = 0
            waitpid(started.pid, &status, 0)
        }
        let channel = LineChannel(fd: started.channel)
        func next() throws -> ScannerMessage {
            let line = try #require(channel.readLine(), "the scanner closed its channel")
            return try JSONDecoder().decode(ScannerMessage.self, from: Data(line))
        }
        #expect(try next().kind == .hello)
        let request = ScanRequest(
            request: 7, file: file, cpuSeconds: 30, activation: .init(dataDirectory: dir.file("data"), settingsFile: nil))
        #expect(channel.write(Array(try JSONEncoder().encode(request)) + [0x0A]))
        var messages: [ScannerMessage] = []
        repeat { messages.append(try next()) } while messages.last?.kind != .result
        #expect(messages.allSatisfy { $0.request == 7 }, "\(messages.map { "\($0.kind) \($0.request ?? -1)" })")
        #expect(messages.last?.plugin?.id == "fixture.reloadable")
    }
}
