import PlugboardCommandLine
import PlugboardFleet
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// Options the fleet commands share, spelled as `plugboard`'s host options
/// are, so an operator passes a pull the same trust settings as the host.
enum FleetOptions {
    static let plugins = CommandSpec.Option(long: "--plugins", valueName: "dir", help: "The plugins directory the set is installed in (a host's --plugins).")
    static let trust: [CommandSpec.Option] = [
        .init(long: "--trusted-key", valueName: "files", help: "Public key files (minisign format, comma-separated) whose signatures are trusted: the host's."),
        .init(long: "--channel", valueName: "name", help: "Refuse a set signed for another release channel (lock-channel)."),
        .init(long: "--sequence-floor", valueName: "n", help: "The lowest sequence accepted while none is recorded for DIR (first use); without it such a set is refused (lock-sequence-unknown)."),
        .init(long: "--cache", valueName: "dir", help: "The hosts' state directory: the last accepted sequence of DIR is recorded there unless --sequence-records says where (default: the host's default)."),
        .init(long: "--sequence-records", valueName: "dir", help: "The folder of the records of accepted sequences the hosts read (their trust.sequenceRecords, --sequence-records)."),
    ]
    static let platform = CommandSpec.Option(long: "--platform", valueName: "os/arch", help: "The platform's set to install (default: this machine's, \(Platform.current)).")
    static let stallWindow = CommandSpec.Option(
        long: "--stall-window", valueName: "seconds",
        help: "Cut a transfer that stays under 1 KiB a second this long (default 30; transfer-too-slow).")
    static let plainHTTP = CommandSpec.Option(long: "--plain-http", help: "Speak HTTP, not HTTPS, to the registry (already so for localhost and 127.0.0.1).")

    /// `--stall-window`, 1 to 3600 seconds (default 30).
    static func stallWindow(_ arguments: ParsedArguments, command: String) throws(UsageError) -> Int {
        guard let text = arguments.value(stallWindow.long) else { return 30 }
        guard let seconds = Int(text), (1...3600).contains(seconds) else {
            throw UsageError(message: "'--stall-window' takes whole seconds from 1 to 3600, got '\(text)'", command: command)
        }
        return seconds
    }

    static func directory(_ arguments: ParsedArguments, command: String) throws(UsageError) -> String {
        guard let directory = arguments.value("--plugins") else { throw UsageError(message: "missing '--plugins <dir>'", command: command) }
        return directory
    }

    static func reference(_ text: String, _ arguments: ParsedArguments, command: String) throws(UsageError) -> Reference {
        switch Reference.parse(text, plainHTTP: arguments.flag("--plain-http")) {
        case let .success(reference): return reference
        case let .failure(error): throw UsageError(message: "\(error.reason): \(error.fix)", command: command)
        }
    }

    static func platform(_ arguments: ParsedArguments, command: String) throws(UsageError) -> Platform? {
        guard let text = arguments.value("--platform") else { return nil }
        guard let platform = Platform(text) else { throw UsageError(message: "'--platform' takes OS/ARCH (linux/amd64, linux/arm64), got '\(text)'", command: command) }
        return platform
    }

    /// The host's signature checks, signatures required (a fleet installs
    /// sets only for hosts that require them): nil and the error printed
    /// when they cannot be set up.
    static func signatures(_ arguments: ParsedArguments, command: String) throws(UsageError) -> (check: SignatureCheck, stateDirectory: String)? {
        guard let keys = arguments.value("--trusted-key") else {
            throw UsageError(message: "missing '--trusted-key <files>': a set is installed only when a trusted key signed it", command: command)
        }
        let files = keys.split(separator: ",").map(String.init)
        guard !files.isEmpty, !files.contains(where: \.isEmpty) else {
            throw UsageError(message: "'--trusted-key' takes public key files separated by commas, got '\(keys)'", command: command)
        }
        var floor: UInt64?
        if let text = arguments.value("--sequence-floor") {
            guard let value = UInt64(text) else { throw UsageError(message: "'--sequence-floor' takes a sequence number (0 or more), got '\(text)'", command: command) }
            floor = value
        }
        let optOut = getenv(DirectoryTrust.environmentOptOut).map { String(cString: $0).lowercased() } ?? ""
        let checksOwnership = !["1", "true", "yes"].contains(optOut)
        switch SignatureCheck.required(trustedKeyFiles: files, channel: arguments.value("--channel"), floor: floor, cache: arguments.value("--cache"),
                                       records: arguments.value("--sequence-records"), checksOwnership: checksOwnership) {
        case let .success(resolved): return resolved
        case let .failure(problem):
            Terminal.error("\(problem.description); the last accepted sequence could not be kept, so nothing is installed. Pass a folder only you (or root) can write with --cache or --sequence-records")
            return nil
        }
    }

    /// Prints `error` (a line, or JSON) and returns the failure status.
    static func fail(_ error: FleetError, json: Bool) -> Int32 {
        if json {
            struct Failure: Encodable { let ok = false; let code: String; let subject: String; let reason: String; let fix: String }
            JSONOutput.print(Failure(code: error.code.rawValue, subject: error.subject, reason: error.reason, fix: error.fix))
        } else {
            Terminal.error("[\(error.code)] \(Terminal.safe(error.subject)): \(Terminal.safe(error.reason)); \(Terminal.safe(error.fix))")
        }
        return ExitStatus.failure
    }

    /// Progress for people: on a terminal, to stderr, one line rewritten.
    static func progress(json: Bool) -> (String) -> Void {
        guard !json, isatty(STDERR_FILENO) != 0 else { return { _ in } }
        return { line in Terminal.writeErr("\r\u{1B}[K" + Terminal.safe(line, limit: 100)) }
    }

    static func endProgress(json: Bool) {
        if !json, isatty(STDERR_FILENO) != 0 { Terminal.writeErr("\r\u{1B}[K") }
    }
}
