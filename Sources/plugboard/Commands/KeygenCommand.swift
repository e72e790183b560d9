import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardHost

/// `plugboard keygen KEYFILE`: a key pair for signing lock files.
enum KeygenCommand: CLICommand {
    static let spec = CommandSpec(
        name: "keygen",
        abstract: "Write an Ed25519 key pair for signing lock files (`plugboard lock --sign`).",
        discussion: """
        Writes KEYFILE, the secret key, readable and writable by its owner only (mode 600), and \
        KEYFILE.pub, the public key in minisign's format, which hosts trust. Never writes over an \
        existing file. A secret key file others can read is refused when signing. Keep the secret key \
        off the hosts; hand them the .pub file. Exits 0 when written, 1 when a file exists or cannot \
        be written, 64 on wrong usage.
        """,
        options: [],
        positionals: [.init(name: "keyfile", help: "Where to write the secret key (the public key goes to KEYFILE.pub).")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let path = arguments.positionals[0]
        guard let key = SigningKey.generate() else {
            Terminal.error("cannot make a key (libcrypto refused the new seed)")
            return ExitStatus.failure
        }
        do {
            try key.write(to: path)
        } catch {
            Terminal.error(Terminal.safe(error.description))
            return ExitStatus.failure
        }
        Terminal.write("Wrote secret key \(Terminal.safe(path)) (mode 600) and public key \(Terminal.safe(path)).pub, key id \(key.publicKey.idText)\n")
        return ExitStatus.success
    }
}
