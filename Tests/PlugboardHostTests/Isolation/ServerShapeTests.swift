import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
import Synchronization
import Testing

/// swift-service-lifecycle's `Service`, as a server's package sees it:
/// `Sendable` and `run() async throws`. A stand-in of the same shape (the
/// suite depends on no package; an example package outside the build
/// conforms the host to the real one).
protocol StandInService: Sendable {
    func run() async throws
}

extension PluginHost: StandInService {}

/// The shapes the Swift server ecosystem expects of the host.
@Suite struct ServerShapeTests {
    let isolation = IsolationTests()

    /// `run()` returns normally when its task is cancelled (shutting the
    /// host down), and when the host is shut down from elsewhere.
    @Test func theHostRunsAsAServiceUntilCancelledOrShutDown() async throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        let service: any StandInService = host
        let running = Task { try await service.run() }
        running.cancel()
        try await running.value
        #expect(host.registry.providers(of: Commands.self).isEmpty, "a cancelled run shut the host down")

        let other = try isolation.host(TemporaryDirectory())
        let waiting = Task { try await other.run() }
        #expect(!other.registry.providers(of: Commands.self).isEmpty)
        other.shutdown()
        try await waiting.value
        // After the shutdown, a run returns at once.
        try await other.run()
    }

    /// What prints is short and names what happened; the child's output
    /// stays in its own field (a server must not echo stack traces).
    @Test func eventsAndCallErrorsPrintForPeople() throws {
        let event = IsolationEvent(pluginID: "com.example.search", kind: .timedOut, pid: 42, detail: "the call of run ran past its deadline")
        #expect("\(event)" == "com.example.search timedOut (process 42): the call of run ran past its deadline")
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        defer { host.shutdown() }
        let error = #expect(throws: IsolatedCallError.self) { try isolation.fault(host, "fatal") }
        #expect(error?.outputTail.isEmpty == false, "\(String(describing: error))")
        #expect(error.map { "\($0)".contains("fatalError in a call") } == false && error.map { "\($0)".hasSuffix("[plugin-crashed]") } == true,
                "\(String(describing: error))")
        // The host's own diagnostic keeps the output.
        #expect(host.diagnostics.contains { $0.code == "isolated-crashed" && $0.message.contains("its last output") })
    }

    /// Output written in a burst (12 lines, one write each) is one
    /// `plugin-output` diagnostic, or a few under load, not one per line.
    @Test func aBurstOfOutputIsOneDiagnostic() throws {
        let dir = try TemporaryDirectory()
        let host = try isolation.host(dir)
        #expect(try isolation.fault(host, "print-lines", "12") == "printed")
        host.shutdown()  // the child's output is all read once it returns
        let outputs = host.diagnostics.filter { $0.code == "plugin-output" && $0.message.contains("of a burst") }.map(\.message)
        let lines = outputs.flatMap { $0.split(separator: "\n").map(String.init) }
        #expect(lines == (1...12).map { "line \($0) of a burst" }, "\(outputs)")
        #expect(outputs.count < 6, "\(outputs.count) diagnostics for 12 lines")
    }
}
