import Foundation
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
import Synchronization
import Testing

/// Paths of things `make fixtures` builds, and temporary plugin directories.
enum Fixtures {
    /// The checkout. Tests/ThreadSanitized compiles this file through a
    /// symlink, so the path is resolved first (and its imports are
    /// `@testable`: `package` symbols reach another package only that way).
    static let repository: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `lib<name>.so` from one of the fixture packages, as a copy in a folder
    /// of the test process's own: the host refuses plugin files other users
    /// can change, and a checkout's build folder may be group-writable or
    /// belong to another user (CI containers); a copy made here is safe.
    static func library(_ name: String, package: String = "Tests/Fixtures") throws -> URL {
        let url = repository.appendingPathComponent("\(package)/.build/debug/lib\(name).so")
        guard FileManager.default.fileExists(atPath: url.path) else {
            Issue.record("missing fixture \(url.path): run `make fixtures` (make test does it)")
            throw FixtureMissing(path: url.path)
        }
        return try safeCopy(of: url, folder: package.replacingOccurrences(of: "/", with: "-"))
    }

    private static let copies = Mutex<[String: URL]>([:])
    /// The test process's copies, removed when it exits (a copy of every
    /// fixture is 51 MB: left behind, each run would keep one).
    private static let copiesFolder: String = {
        let folder = FileManager.default.temporaryDirectory.path + "/plugboard-test-fixtures-\(getpid())-\(UUID().uuidString)"
        atexit { try? FileManager.default.removeItem(atPath: Fixtures.copiesFolder) }
        return folder
    }()

    private static func safeCopy(of url: URL, folder: String) throws -> URL {
        try copies.withLock { copies in
            let key = "\(folder)/\(url.lastPathComponent)"
            if let known = copies[key] { return known }
            let directory = "\(copiesFolder)/\(folder)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            chmod(copiesFolder, 0o755)
            chmod(directory, 0o755)
            let target = URL(fileURLWithPath: "\(directory)/\(url.lastPathComponent)")
            let staged = target.path + ".partial"
            unlink(staged)
            try FileManager.default.copyItem(atPath: url.path, toPath: staged)
            chmod(staged, 0o755)
            rename(staged, target.path)
            copies[key] = target
            return target
        }
    }

    /// An example plugin as `make examples` gathers them in `.build/plugins`, as a safe copy.
    static func example(_ name: String) throws -> URL {
        try safeCopy(of: try exampleInCheckout(name), folder: "examples")
    }

    static func exampleInCheckout(_ name: String) throws -> URL {
        let url = repository.appendingPathComponent(".build/plugins/lib\(name).so")
        guard FileManager.default.fileExists(atPath: url.path) else {
            Issue.record("missing example plugin \(url.path): run `make examples` (make test does it)")
            throw FixtureMissing(path: url.path)
        }
        return url
    }

    /// A directory holding copies of the example plugins.
    static func examplesDirectory(_ names: [String] = ["Checkout", "Coupons", "Greeter", "Restaurants"]) throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory("plugboard-examples")
        for name in names { try dir.copy(example(name), as: "lib\(name).so") }
        return dir
    }

    static func futureLibrary(_ name: String) throws -> URL { try library(name, package: "Tests/FutureFixtures") }
    static func embeddedLibrary(_ name: String) throws -> URL { try library(name, package: "Tests/EmbeddedFixture") }

    /// An executable built by a fixture or the root package.
    static func executable(_ name: String, package: String = "") throws -> URL {
        let base = package.isEmpty ? repository : repository.appendingPathComponent(package)
        let url = base.appendingPathComponent(".build/debug/\(name)")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            Issue.record("missing executable \(url.path): run `make fixtures` and `swift build`")
            throw FixtureMissing(path: url.path)
        }
        return url
    }

    struct FixtureMissing: Error { let path: String }

    /// What this host build checks plugins against (SDK version and ABI,
    /// toolchain), read from a host with a cache folder of its own that is
    /// shut down at once.
    static let baseline: PluginHost.Baseline = {
        let cache = try? TemporaryDirectory("plugboard-baseline-cache")
        return withExtendedLifetime(cache) {
            withHost(.with(cacheDirectory: cache?.path), declaring: false) { $0.baseline }
        }
    }()

    /// The host's toolchain line as it starts ("clang version 21.") and the
    /// same with another major of the same length ("clang version 99."): to
    /// make a file look built by another toolchain, whatever this one is.
    static let toolchainPatch: (current: [UInt8], foreign: [UInt8], foreignText: String) = {
        let prefix = "clang version "
        let line = baseline.toolchain
        let major = String(line.dropFirst(prefix.count).prefix { $0.isNumber })
        let other = String(repeating: major.allSatisfy { $0 == "9" } ? "8" : "9", count: max(1, major.count))
        return (Array("\(prefix)\(major).".utf8), Array("\(prefix)\(other).".utf8), "\(prefix)\(other).")
    }()
}

/// A fresh directory under the system temp dir, removed when the value is deinitialised.
final class TemporaryDirectory: Sendable {
    let url: URL
    var path: String { url.path }

    init(_ label: String = "plugboard-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // Explicit modes: the host refuses folders and plugin files other
        // users can write, whatever the umask of the machine running the tests.
        chmod(url.path, 0o755)
        Self.made.withLock { _ = $0.insert(url.path) }
    }

    deinit {
        Self.remove(url.path)
    }

    private static func remove(_ path: String) {
        // Make chmod-000 files removable again first.
        if let names = try? FileManager.default.contentsOfDirectory(atPath: path) {
            for name in names { chmod(path + "/" + name, 0o755) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Every folder made: at the test process's exit, those still there go
    /// too (one a test kept alive, or one a child process made again after
    /// the test removed it), so `make test` leaves none behind.
    private static let made: Mutex<Set<String>> = {
        atexit {
            for path in TemporaryDirectory.made.withLock({ $0 }) { TemporaryDirectory.remove(path) }
        }
        return Mutex([])
    }()

    /// Copies `source` in under `name`; returns the copy's path.
    @discardableResult
    func copy(_ source: URL, as name: String) throws -> String {
        let target = url.appendingPathComponent(name)
        try FileManager.default.copyItem(at: source, to: target)
        chmod(target.path, 0o755)
        return target.path
    }

    @discardableResult
    func write(_ data: Data, as name: String) throws -> String {
        let target = url.appendingPathComponent(name)
        try data.write(to: target)
        return target.path
    }

    func file(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Writes a lock file at `path` listing each file (its name, the id given,
/// version 1.0.0) with the SHA-256 of its bytes as they are now.
func writeLockFile(_ path: String, listing files: [(path: String, id: String)]) throws {
    let entries = try files.map { file in
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file.path)))
        return LockFile.Entry(
            file: URL(fileURLWithPath: file.path).lastPathComponent, id: file.id, version: "1.0.0", sha256: LockFile.sha256(of: bytes))
    }
    try LockFile(plugins: entries).write(to: path)
}

/// Runs a process to completion; returns status and both outputs.
struct ProcessResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Both pipes read at once, before waiting, so neither can fill and block
    // the child while the other is read.
    let errors = Mutex(Data())
    let reading = DispatchGroup()
    DispatchQueue.global().async(group: reading) {
        let data = err.fileHandleForReading.readDataToEndOfFile()
        errors.withLock { $0 = data }
    }
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    reading.wait()
    let stderr = errors.withLock { $0 }
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
}

/// Replaces the first occurrence of `pattern` in the file at `path` (same length).
func patchBytes(at path: String, replacing pattern: [UInt8], with replacement: [UInt8]) throws {
    precondition(pattern.count == replacement.count)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    guard let start = (0...(bytes.count - pattern.count)).first(where: { Array(bytes[$0..<$0 + pattern.count]) == pattern }) else {
        throw PatternNotFound()
    }
    bytes.replaceSubrange(start..<start + pattern.count, with: replacement)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

struct PatternNotFound: Error {}

/// A process started as a shell starts one: no blocked signals, default
/// dispositions. (Foundation's `Process` passes on the calling thread's
/// signal mask, and test threads block SIGINT and SIGTERM.)
struct ShellProcess {
    let pid: pid_t

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnFailed(errno: result) }
        self.pid = pid
    }

    struct SpawnFailed: Error { let errno: Int32 }

    /// Waits for the end; the signal that ended it, or nil if it exited.
    func waitForSignal() -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f ? signal : nil
    }
}

/// Starts `plugboard ARGUMENTS` (a `run linger` on a folder holding the
/// CommandLinger fixture) as a shell would, waits for the event that its
/// command runs (a line on a FIFO in `work`: no delay), then kills it with
/// SIGKILL, as a crash would end it. Returns once it is reaped.
func runUntilLingeringThenKill(_ arguments: [String], environment: [String: String], work: TemporaryDirectory) throws {
    let fifo = work.file("lingering.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    defer { close(reader) }
    let process = try ShellProcess(
        Fixtures.executable("plugboard"), arguments, environment: environment.merging(["PLUGBOARD_FIXTURE_FIFO": fifo]) { $1 })
    var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
    let reached = poll(&descriptor, 1, 60_000) == 1
    kill(process.pid, SIGKILL)
    #expect(process.waitForSignal() == SIGKILL)
    try #require(reached, "the child host never ran its lingering command")
}

/// Whether `pid` ends within `seconds` (a zombie has ended): waits on a
/// pidfd, which becomes readable when the process exits.
func waitForEnd(of pid: pid_t, seconds: Int32) -> Bool {
    typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open") else { return kill(pid, 0) != 0 }
    let descriptor = unsafeBitCast(symbol, to: PidfdOpen.self)(pid, 0)
    if descriptor < 0 { return errno == ESRCH }
    defer { close(descriptor) }
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, seconds * 1000) == 1
}
