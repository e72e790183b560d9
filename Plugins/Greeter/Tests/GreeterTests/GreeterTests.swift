import Plugboard
import Testing
@testable import Greeter

/// The Greeter example, tested the way a plugin author tests theirs: through
/// the SDK's PluginHarness, without a host.
@Suite struct GreeterTests {
    @Test func greetsCountsInStorageAndLogsOnActivate() throws {
        let harness = try PluginHarness(Greeter.self, id: "dev.plugboard.example.greeter")
        try harness.activate()
        #expect(harness.logged == [.init(level: .debug, message: "greeter ready")])
        let greet = try #require(harness.providers(of: Commands.self).first)
        #expect(greet.name == "greet")
        #expect(try greet.run(arguments: ["Ada"]) == "Hello, Ada! (greeting 1 this session, 1 in all)")
        #expect(try greet.run(arguments: []) == "Hello, world! (greeting 2 this session, 2 in all)")
        #expect(harness.stored["greetings"] == Array("2".utf8))
    }

    @Test func theConfiguredGreetingAndStoredCountAreUsed() throws {
        let harness = try PluginHarness(
            Greeter.self, configuration: ["greeting": .string("Howdy")], storage: ["greetings": Array("41".utf8)])
        let greet = try #require(harness.providers(of: Commands.self).first)
        #expect(try greet.run(arguments: ["Ada"]) == "Howdy, Ada! (greeting 1 this session, 42 in all)")
    }

    @Test func theSessionCountCrossesAReload() throws {
        let first = try PluginHarness(Greeter.self)
        _ = try first.providers(of: Commands.self).first?.run(arguments: ["Ada"])
        let second = try first.reload(as: Greeter.self)
        let greet = try #require(second.providers(of: Commands.self).first)
        #expect(try greet.run(arguments: ["Ada"]) == "Hello, Ada! (greeting 2 this session, 2 in all)")
    }

    @Test func withoutStorageItRefusesToStartAndSaysWhatToDeclare() throws {
        let error = #expect(throws: ServiceError.self) {
            try PluginHarness(Greeter.self, services: [Services.Logging.id, Services.Configuration.id])
        }
        #expect(error?.code == .serviceNotDeclared)
        #expect(error?.message.contains("plugboard.storage") == true)
    }
}

/// The harness comes from the SDK's shared library, not a copy linked into
/// the test: a second copy would make the provider casts above fail.
@Suite struct OneSDKCopyTests {
    /// The file mapped at `address`, from /proc/self/maps.
    func image(containing address: UInt) throws -> String? {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            if range.count == 2, range[0] <= address, address < range[1] { return fields.count > 5 ? String(fields[5]) : nil }
        }
        return nil
    }

    @Test func theHarnessAndTheSDKAreOneSharedImage() throws {
        let harness = UInt(bitPattern: unsafeBitCast(PluginHarness.self as AnyClass, to: Int.self))
        let context = UInt(bitPattern: unsafeBitCast(PluginContext.self as AnyClass, to: Int.self))
        let plugin = UInt(bitPattern: unsafeBitCast(Greeter.self as AnyClass, to: Int.self))
        let sdk = try #require(try image(containing: harness))
        #expect(sdk.hasSuffix("/libPlugboard.so"), "\(sdk)")
        #expect(try image(containing: context) == sdk)
        #expect(try image(containing: plugin) != sdk, "the plugin's own code is in the test, the SDK is not")
    }
}
