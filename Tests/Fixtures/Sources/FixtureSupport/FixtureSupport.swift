// Shared by the fixtures (linked statically into each; no type crosses images).
import CPlugboard
import Plugboard
#if canImport(Glibc)
import Glibc
#endif

/// Appends "<event> <name>" to the file named by PLUGBOARD_FIXTURE_LOG, if set.
/// Tests set it only on child processes, so in-process tests never write.
func logLifecycle(_ event: String, _ name: String) {
    guard let path = getenv("PLUGBOARD_FIXTURE_LOG") else { return }
    let file = fopen(path, "a")
    guard let file else { return }
    fputs("\(event) \(name)\n", file)
    fclose(file)
}

/// Names an ``EchoPlugin`` instance.
public protocol FixtureName { static var name: String { get } }

/// A well-behaved plugin: one command that echoes its name and arguments.
public final class EchoPlugin<Name: FixtureName>: Plugin {
    public init(context: PluginContext) throws { logLifecycle("init", Name.name) }
    public func activate() throws { logLifecycle("activate", Name.name) }
    public func deactivate() { logLifecycle("deactivate", Name.name) }
    public func contributions() -> [Contribution] {
        [.provider(EchoCommand(name: Name.name), for: Commands.self)]
    }
}

public struct EchoCommand: Command {
    public let name: String
    public var summary: String { "echo from \(name)" }
    public func run(arguments: [String]) throws -> String {
        ([name] + arguments).joined(separator: " ")
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

enum Forged: FixtureName { static let name = "forged" }

/// A valid descriptor with one field changed by `change`.
public func forged(_ change: (inout plugboard_descriptor) -> Void) -> UnsafeRawPointer {
    let raw = PluginExport.descriptor(
        for: EchoPlugin<Forged>.self, id: "fixture.forged", version: "1.0.0", provides: [Commands.interface])
    let descriptor = UnsafeMutablePointer(mutating: raw.assumingMemoryBound(to: plugboard_descriptor.self))
    change(&descriptor.pointee)
    return raw
}
