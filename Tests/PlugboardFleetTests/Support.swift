import Foundation
import PlugboardHost
import PlugboardHostTesting
import Synchronization
import Testing

/// Every fleet suite, nested here so their tests run one at a time: each
/// blocks a thread of Swift's pool (two on a 2-core machine) while its
/// processes run, and two at once for a minute starved the host suites'
/// async tests, which need a pool thread to start their calls (seen in
/// `make test`: nothing parked within 60 s). One at a time, they hold one.
@Suite(.serialized, .enabled(if: Fleet.canRun, "docker-registry is not installed (sudo apt-get install docker-registry); make test installs it"))
enum FleetSuites {}

/// Paths, the tool, and folders for the fleet tests.
enum Fleet {
    static let repository: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var tool: String { repository.path + "/.build/debug/plugboard" }

    /// `lib<name>.so` built by `make fixtures`.
    static func fixture(_ name: String) throws -> String {
        let path = repository.path + "/Tests/Fixtures/.build/debug/lib\(name).so"
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("missing fixture \(path): run `make fixtures` (make test does it)")
            throw Missing(path: path)
        }
        return path
    }

    struct Missing: Error { let path: String }

    /// Whether docker-registry is installed; under CI (`CI` set) its absence fails the tests instead of skipping them.
    static let canRun = LocalRegistry.program != nil || ProcessInfo.processInfo.environment["CI"] != nil

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]) ?? [:] }
        var code: String? { json["code"] as? String }
    }

    /// Runs a program and waits; its exit status.
    static func command(_ program: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs `plugboard` with `arguments` and waits for it.
    static func run(_ arguments: [String], environment extra: [String: String] = [:], shell prefix: String? = nil) throws -> Result {
        let process = Process()
        if let prefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", prefix + " exec \"$0\" \"$@\"", tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        for (name, value) in extra { environment[name] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both read to the end before waiting: a full pipe would block the tool.
        let errData = Mutex(Data())
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = data }
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }
}

/// A fresh folder, removed at the end.
final class Folder: Sendable {
    let path: String

    init(_ label: String = "plugboard-fleet") throws {
        path = FileManager.default.temporaryDirectory.path + "/\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { path + "/" + name }
}

/// A signing key pair and signed sets made with the real tool
/// (`plugboard keygen`, `plugboard lock --sign`), each in its own folder.
struct Publisher {
    let folder: Folder
    var key: String { folder.sub("key") }
    var publicKey: String { folder.sub("key.pub") }

    init(_ folder: Folder) throws {
        self.folder = folder
        let made = try Fleet.run(["keygen", folder.sub("key")])
        try #require(made.status == 0, "keygen: \(made.stderr)")
    }

    /// A folder `name` holding `plugins` (fixture names), locked and signed
    /// with `sequence` for `channel`.
    func set(_ name: String, plugins: [String], sequence: UInt64, channel: String = "stable") throws -> String {
        let directory = folder.sub(name)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        for plugin in plugins {
            let target = "\(directory)/lib\(plugin).so"
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: try Fleet.fixture(plugin), toPath: target)
            chmod(target, 0o755)
        }
        let locked = try Fleet.run(["lock", "--plugins", directory, "--sign", key, "--sequence", "\(sequence)", "--channel", channel])
        try #require(locked.status == 0, "lock: \(locked.stderr)")
        return directory
    }

    /// Signs the lock file in `directory` again with terms the tool will not write (an expiry in the past).
    func resign(_ directory: String, sequence: UInt64, expires: Date, channel: String = "stable") throws {
        let secret = try SigningKey.load(key)
        let lock = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/plugboard.lock")))
        let signature = try #require(LockSignature.sign(lock, key: secret, terms: .init(sequence: sequence, expires: expires, channel: channel)))
        try signature.text.write(toFile: directory + "/plugboard.lock.minisig", atomically: true, encoding: .utf8)
    }
}

/// The files of a folder and their bytes, to show a pull that failed changed nothing.
func snapshot(_ directory: String) -> [String: Data] {
    var files: [String: Data] = [:]
    for name in (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? [] {
        if let data = FileManager.default.contents(atPath: directory + "/" + name) { files[name] = data }
    }
    return files
}
