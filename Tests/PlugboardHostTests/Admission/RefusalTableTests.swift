import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Testing

/// Every refusal of the admission step, through every path that admits a
/// file: the same code on each, and the refused file's code never ran (its
/// constructor writes `$TMPDIR/fixture-delta-ran`, CMarker's the file
/// `$PLUGBOARD_FIXTURE_MARKER` names: each case points both at one file of
/// its own, for its processes and scanners), except for `lock-id-mismatch`,
/// which only a scan can find: there it ran once, in the scanner child.
@Suite struct RefusalTableTests {
    enum Refusal: String, CaseIterable, Sendable {
        case untrustedFile, untrustedFolder, lockHashMismatch, lockIDMismatch, staticCheck, notELF, changedBytes

        var code: String {
            switch self {
            case .untrustedFile, .untrustedFolder: "unsafe-permissions"
            case .lockHashMismatch: "lock-hash-mismatch"
            case .lockIDMismatch: "lock-id-mismatch"
            case .staticCheck: "not-swift-plugin"
            case .notELF: "not-elf"
            case .changedBytes: "file-changed"
            }
        }
    }

    enum Path: String, CaseIterable, Sendable {
        case discovery, activation, reload, inspect, lock, interfaceLibrary
    }

    struct Case: Sendable, CustomStringConvertible {
        let refusal: Refusal
        let path: Path
        var description: String { "\(refusal.rawValue) via \(path.rawValue)" }
    }

    /// Where a refusal cannot arise, and why:
    /// - under a lock file discovery admits every file in full and the host
    ///   later loads that admitted copy, so no lock refusal waits for activation;
    /// - `plugboard lock` writes the lock file: no lock refusal applies to it;
    /// - an interface library has no id, and no Swift-plugin checks;
    /// - a change between scan and load is only possible where a remembered
    ///   scan stands for the file: activation.
    static func applies(_ refusal: Refusal, _ path: Path) -> Bool {
        switch (refusal, path) {
        case (.lockHashMismatch, .activation), (.lockIDMismatch, .activation): false
        case (.lockHashMismatch, .lock), (.lockIDMismatch, .lock): false
        case (.lockIDMismatch, .interfaceLibrary), (.staticCheck, .interfaceLibrary): false
        case (.changedBytes, let other): other == .activation
        default: true
        }
    }

    static let cases: [Case] = Refusal.allCases.flatMap { refusal in
        Path.allCases.filter { applies(refusal, $0) }.map { Case(refusal: refusal, path: $0) }
    }

    /// One case's folders: plugins, cache, images, its own TMPDIR.
    struct Setup {
        let work: TemporaryDirectory
        var plugins: String { work.file("plugins") }
        var cache: String { work.file("cache") }
        var images: String { work.file("images") }
        var temporary: String { work.file("tmp") }
        var marker: String { temporary + "/fixture-delta-ran" }
        var lock: String { LockFile.defaultPath(for: plugins) }

        init() throws {
            work = try TemporaryDirectory("plugboard-refusal")
            for folder in ["plugins", "plugins/lib", "cache", "tmp", "other"] {
                try FileManager.default.createDirectory(atPath: work.file(folder), withIntermediateDirectories: true)
                chmod(work.file(folder), 0o755)
            }
        }

        /// Where the fixtures' constructors write: MarkedDelta's in
        /// `$TMPDIR`, CMarker's in `$PLUGBOARD_FIXTURE_MARKER`; one file here.
        var markers: [String: String] { ["TMPDIR": temporary, "PLUGBOARD_FIXTURE_MARKER": marker] }

        var ranCount: Int {
            ((try? String(contentsOfFile: marker, encoding: .utf8)) ?? "").split(separator: "\n").count
        }

        /// Scanners without their sandbox: the markers count the scans
        /// that ran code, so the code must be able to write them.
        func configuration(locked: Bool) -> PluginHost.Configuration {
            PluginHost.Configuration.with(
                pluginsDirectory: plugins, cacheDirectory: cache, scanner: scanner, lockFile: locked ? lock : nil)
        }

        var scanner: ScannerSettings {
            var scanner = ScannerSettings(extraEnvironment: markers)
            scanner.sandbox = nil
            return scanner
        }

        func plugboard(_ arguments: [String]) throws -> ProcessResult {
            // `lock` hashes files and runs no plugin code: it has no scanner.
            let scanning = arguments.first == "lock" ? [] : ["--scanner-sandbox", "off"]
            return try runProcess(Fixtures.executable("plugboard"), arguments + scanning, environment: markers)
        }
    }

    /// The bytes a refusal starts from.
    static func subject(_ refusal: Refusal) throws -> Data {
        switch refusal {
        case .staticCheck: try Data(contentsOf: Fixtures.library("CMarker"))
        case .notELF: Data("#!/bin/sh\necho not a library\n".utf8)
        default: try Data(contentsOf: Fixtures.library("MarkedDelta"))
        }
    }

    /// Puts the refusal in place for `file` (already holding its bytes).
    static func apply(_ refusal: Refusal, to file: String, in setup: Setup, library: Bool = false) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let name = URL(fileURLWithPath: file).lastPathComponent
        switch refusal {
        case .untrustedFile: chmod(file, 0o666)
        case .untrustedFolder: chmod(URL(fileURLWithPath: file).deletingLastPathComponent().path, 0o777)
        case .lockHashMismatch:
            let wrong = String(repeating: "0", count: 64)
            try LockFile(
                plugins: library ? [] : [.init(file: name, id: "fixture.delta", version: "1.0.0", sha256: wrong)],
                libraries: library ? [.init(file: name, sha256: wrong)] : []
            ).write(to: setup.lock)
        case .lockIDMismatch:
            try LockFile(plugins: [.init(file: name, id: "fixture.alpha", version: "1.0.0", sha256: LockFile.sha256(of: bytes))])
                .write(to: setup.lock)
        case .staticCheck, .notELF, .changedBytes: break
        }
    }

    static var locks: Set<Refusal> { [.lockHashMismatch, .lockIDMismatch] }

    @Test(arguments: cases)
    func aRefusalHasOneCodeOnEveryPathAndNoCodeOfTheFileRuns(_ testCase: Case) throws {
        let setup = try Setup()
        let refusal = testCase.refusal
        let locked = Self.locks.contains(refusal)
        let file = setup.plugins + "/libDelta.so"
        var code: String?
        var mappedInHost = false

        switch testCase.path {
        case .discovery:
            try Self.subject(refusal).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o755)
            try Self.apply(refusal, to: file, in: setup)
            var configuration = setup.configuration(locked: locked)
            configuration.paths.images = setup.images
            try withHost(configuration) { host in
                code = try host.discover().first { $0.path == file }?.code
                // Discovery maps nothing in the host, refused or not.
                mappedInHost = !mappedFiles(under: setup.images).isEmpty
            }

        case .activation:
            // Known and available first (its scan remembered, run with
            // another TMPDIR), then the file changes before the first lookup.
            try Data(contentsOf: Fixtures.library("MarkedDelta")).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o755)
            try withHost(.with(pluginsDirectory: setup.plugins, cacheDirectory: setup.cache)) { host in _ = try host.discover() }
            var configuration = setup.configuration(locked: false)
            configuration.paths.images = setup.images
            try withHost(configuration) { host in
                #expect(try host.discover().first?.status == .available)
                switch refusal {
                case .staticCheck, .notELF:
                    let staged = setup.work.file("other/staged.so")
                    try Self.subject(refusal).write(to: URL(fileURLWithPath: staged))
                    chmod(staged, 0o755)
                    rename(staged, file)
                case .changedBytes:
                    try patchBytes(at: file, replacing: Array("echo from".utf8), with: Array("ECHO FROM".utf8))
                default:
                    try Self.apply(refusal, to: file, in: setup)
                }
                host.activateAll()
                code = host.records.last { $0.path == file }?.code
                mappedInHost = !mappedFiles(under: setup.images).isEmpty
            }

        case .reload:
            // A good generation from another file, then a reload from the refused one.
            let good = setup.work.file("other/libDeltaGood.so")
            try Data(contentsOf: Fixtures.library("MarkedDelta")).write(to: URL(fileURLWithPath: good))
            chmod(good, 0o755)
            try Self.subject(refusal).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o755)
            try Self.apply(refusal, to: file, in: setup)
            if locked {
                // The running generation is allowed by the same lock.
                var lock = try LockFile.load(setup.lock)
                lock.plugins.append(.init(
                    file: "libDeltaGood.so", id: "fixture.delta", version: "1.0.0",
                    sha256: LockFile.sha256(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: good))))))
                try LockFile(plugins: lock.plugins).write(to: setup.lock)
            }
            code = reloadCode(setup: setup, refusal: refusal, good: good, file: file)

        case .inspect:
            try Self.subject(refusal).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o755)
            try Self.apply(refusal, to: file, in: setup)
            let result = try setup.plugboard(["inspect", file, "--json", "--cache", setup.cache] + (locked ? ["--locked"] : []))
            #expect(result.status == 1, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            code = object?["code"] as? String

        case .lock:
            try Self.subject(refusal).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o755)
            try Self.apply(refusal, to: file, in: setup)
            let result = try setup.plugboard(["lock", "--plugins", setup.plugins, "--cache", setup.cache])
            #expect(result.status == 0, "\(result.stderr)")
            let prefix = "left out: \(file) ("
            let line = result.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }
            code = line.flatMap { $0.split(separator: ": ").last.map { String($0.dropLast()) } }
            #expect(try LockFile.load(setup.lock).plugins.isEmpty)

        case .interfaceLibrary:
            // (A refused library is never copied where a plugin would find
            // it, so no plugin can load it: checked below.)
            let library = setup.plugins + "/lib/libDelta.so"
            try Self.subject(refusal).write(to: URL(fileURLWithPath: library))
            chmod(library, 0o755)
            try Self.apply(refusal, to: library, in: setup, library: true)
            var configuration = setup.configuration(locked: locked)
            configuration.paths.images = setup.images
            try withHost(configuration) { host in
                _ = try host.discover()
                code = host.diagnostics.first { $0.message.hasPrefix("\(library): interface library refused") }?.code.rawValue
                // Never copied where a plugin would find (and load) it.
                let copies = FileManager.default.enumerator(atPath: setup.images)?.compactMap { $0 as? String } ?? []
                #expect(!copies.contains { $0.hasSuffix("/libDelta.so") }, "\(copies)")
                mappedInHost = !mappedFiles(under: setup.images).isEmpty
            }
        }

        #expect(code == refusal.code, "\(testCase)")
        // The scanned id is known only from a scan: a file whose locked bytes
        // carry another id ran once, in the scanner child, never in a host.
        let scans = refusal == .lockIDMismatch && testCase.path != .reload ? 1 : 0
        #expect(setup.ranCount == scans, "the refused file's constructor ran (\(testCase))")
        #expect(!mappedInHost, "an image of the refused file is mapped in the host (\(testCase))")
        // The check above reads /proc/self/maps: it can see this process's own images.
        #expect(!mappedFiles(under: Fixtures.repository.path + "/.build").isEmpty)
    }

    /// The reload path: a host running the good generation reloads from the refused file.
    func reloadCode(setup: Setup, refusal: Refusal, good: String, file: String) -> String? {
        var configuration = setup.configuration(locked: Self.locks.contains(refusal))
        configuration.pluginsDirectory = nil
        configuration.paths.images = setup.images
        configuration.scanner = setup.scanner
        return withHost(configuration) { host in
            let before = setup.ranCount
            guard let id = host.load(files: [good]).first?.id else {
                Issue.record("the good generation did not load: \(host.records.map { $0.code ?? "" })")
                return nil
            }
            // The good generation's own scan ran its constructor: count from here.
            let afterGood = setup.ranCount
            #expect(afterGood >= before)
            #expect(mappedFiles(under: setup.images).contains { $0.hasSuffix("-libDeltaGood.so") }, "the good generation is seen mapped")
            let outcome = host.reload(id, from: file)
            // The refused build's copy (named for its generation) is not mapped.
            #expect(!mappedFiles(under: setup.images).contains { $0.hasSuffix("-gen2.so") }, "the refused build is mapped in the host")
            // (A lock-id refusal follows the verification scan: one run there.)
            #expect(setup.ranCount == afterGood + (refusal == .lockIDMismatch ? 1 : 0), "the refused build's constructor ran")
            guard case let .rejected(error) = outcome.result else { return "not rejected: \(outcome.result)" }
            // The refusal count is checked against the good generation's marks.
            try? FileManager.default.removeItem(atPath: setup.marker)
            return error.code.rawValue
        }
    }
}
