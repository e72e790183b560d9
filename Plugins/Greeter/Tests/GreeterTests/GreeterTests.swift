import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
        // Read to the end: procfs files report a size of 0.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            if range.count == 2, range[0] <= address, address < range[1] { return fields.count > 5 ? String(fields[5]) : nil }
        }
        return nil
    }

    /// Where the process's global lookup finds `symbol`: the first image that
    /// defines it (the test executable first, were the SDK linked into it).
    func definer(of symbol: String) throws -> String? {
        let address = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol), "\(symbol) is not defined")
        return try image(containing: UInt(bitPattern: address))
    }

    @Test func theHarnessAndTheSDKAreOneSharedImage() throws {
        // The metadata accessors of PluginHarness and PluginContext.
        let sdk = try #require(try definer(of: "$s9Plugboard13PluginHarnessCMa"))
        #expect(sdk.hasSuffix("/libPlugboard.so"), "\(sdk)")
        #expect(try definer(of: "$s9Plugboard13PluginContextCMa") == sdk)
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        #expect(sdk != executable, "the SDK is not linked into the test executable")
    }

}
