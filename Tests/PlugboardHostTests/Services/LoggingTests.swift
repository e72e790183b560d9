import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Synchronization
import Testing

@Suite struct LoggingTests {
    @Test func pluginMessagesCarryThePluginIDAndGoToTheHostsSink() throws {
        let records = Mutex<[String]>([])
        let dir = try Fixtures.examplesDirectory(["Coupons"]), cache = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path,
            logSink: LogSink(minimumLevel: .info) { record in records.withLock { $0.append("\(record.level) \(record.label) \(record.message)") } },
            cacheDirectory: cache.path))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        try host.loadAll()
        let apply = try #require(host.registry.provider(of: Commands.self) { $0.name == "apply-coupon" })
        _ = try apply.run(arguments: ["SAVE10"])
        #expect(records.withLock { $0 } == ["info dev.plugboard.example.coupons coupon SAVE10 applied"])
    }
}
