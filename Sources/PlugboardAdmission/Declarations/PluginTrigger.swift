import PlugboardCore

/// An activation trigger of a plugin, typed: the descriptor spells it as a
/// string (the SDK's `ActivationTrigger.encoded`), which is read, checked
/// and cached as written; everything that acts on a trigger reads it
/// through this type, so the spelling is parsed in one place.
package enum PluginTrigger: Hashable, Sendable {
    /// Activate when the host starts.
    case startup
    /// Activate before the first delivery of the event `name`.
    case event(String)
    /// Activate before the first request under the path prefix, split into segments.
    case route([Substring])
    /// Activate before the command `name` runs (`plugboard run NAME`).
    case command(String)

    /// The trigger `encoded` spells: `startup`, `event:NAME` or
    /// `command:NAME` (NAME of ASCII letters, digits, `.`, `-`, `_`) or
    /// `route:/PREFIX` (PREFIX of URL path characters: ASCII letters, digits
    /// and `-._~!$&'()*+,;=:@%/{}`), at most 200 bytes: a trigger is shown to
    /// people and must not carry controls. nil for anything else.
    init?(_ encoded: String) {
        guard encoded.utf8.count <= 200 else { return nil }
        if encoded == "startup" {
            self = .startup
            return
        }
        if encoded.hasPrefix("route:/") {
            let prefix = encoded.dropFirst("route:".count)
            guard prefix.utf8.allSatisfy({ Self.isAlphanumeric($0) || Self.routeSymbols.contains($0) }) else { return nil }
            self = .route(Self.segments(prefix))
            return
        }
        if let name = Self.name(in: encoded, after: "event:") {
            self = .event(name)
        } else if let name = Self.name(in: encoded, after: "command:") {
            self = .command(name)
        } else {
            return nil
        }
    }

    /// The name after `kind` in `encoded`, if it has that kind and the name is valid.
    private static func name(in encoded: String, after kind: String) -> String? {
        guard encoded.hasPrefix(kind) else { return nil }
        let name = encoded.utf8.dropFirst(kind.utf8.count)
        guard !name.isEmpty, name.allSatisfy({ isAlphanumeric($0) || nameSymbols.contains($0) }) else { return nil }
        return String(Substring(name))
    }

    /// The command it names, if it is a command trigger.
    var command: String? {
        if case let .command(name) = self { return name }
        return nil
    }

    /// A path split as route triggers are: segments, empty ones dropped.
    package static func segments(_ path: Substring) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    private static let routeSymbols = Set("-._~!$&'()*+,;=:@%/{}".utf8)
    private static let nameSymbols = Set(".-_".utf8)

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension ScannedPlugin {
    /// Its activation triggers, typed (checked when the descriptor was read;
    /// one that does not parse, from a damaged cache, is ignored).
    package var triggers: [PluginTrigger] { activation.compactMap(PluginTrigger.init) }
}

extension PluginRecord {
    /// The commands its `command:` triggers declare.
    package var declaredCommands: [String] { activation.compactMap { PluginTrigger($0)?.command } }
}
