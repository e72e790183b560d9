import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardHost
import Synchronization

/// Builds a plugin package with SwiftPM and finds the `.so` it produces.
public struct PackageBuilder: Sendable {
    public struct Build: Sendable {
        public let succeeded: Bool
        /// The compiler's diagnostics (`error:` and `warning:` lines with their context).
        public let diagnostics: [String]
        /// Everything `swift build` printed.
        public let output: String
        public let milliseconds: Double
    }

    /// Why a package cannot be built as a plugin: a struct with an
    /// extensible ``Code``, the package directory and what to do.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// A stable, machine-readable code.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            public let rawValue: String
            public init(_ rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// The directory has no `Package.swift`.
            public static let notAPackage = Code("dev-not-a-package")
            /// The package vends no dynamic library.
            public static let noDynamicLibrary = Code("dev-no-dynamic-library")
            /// `swift package` failed (its last lines are in the reason).
            public static let swiftFailed = Code("dev-swift-failed")
        }

        public let code: Code
        /// The package directory.
        public let path: String
        /// What is wrong and what to do.
        public let reason: String

        public var description: String { "\(path): \(reason)" }
    }

    /// What `swift package dump-package` says that matters here.
    private struct Manifest: Decodable {
        struct Product: Decodable {
            struct Kind: Decodable {
                /// `["dynamic"]` for a dynamic library; absent for executables.
                let library: [String]?
            }
            let name: String
            let type: Kind
        }
        let products: [Product]
    }

    public let packageDirectory: String
    public let product: String
    public let swift: String

    /// Reads the package's manifest to find its dynamic library product.
    public init(packageDirectory: String, swift: String = "swift") throws(Failure) {
        let directory = PluginDirectory.absolutePath(packageDirectory)
        guard FileManager.default.fileExists(atPath: directory + "/Package.swift") else {
            throw Failure(code: .notAPackage, path: directory, reason: "no Package.swift; `plugboard dev` takes the directory of a plugin package")
        }
        self.packageDirectory = directory
        self.swift = swift
        // stdout only: warnings on stderr must not spoil the JSON.
        let dump = Self.run(swift, ["package", "--package-path", directory, "dump-package"], mergingErrors: false)
        guard dump.status == 0, let manifest = try? JSONDecoder().decode(Manifest.self, from: Data(dump.output.utf8)) else {
            // The compiler's own error lines (they name the manifest and the line), else the last lines.
            let lines = (dump.errors + dump.output).split(separator: "\n")
            let errors = lines.filter { $0.contains("error:") }
            let detail = (errors.isEmpty ? lines.suffix(3) : errors.prefix(3)).joined(separator: " | ")
            throw Failure(code: .swiftFailed, path: directory, reason: "swift package dump-package failed: \(detail)")
        }
        guard let name = manifest.products.first(where: { $0.type.library?.contains("dynamic") == true })?.name else {
            throw Failure(
                code: .noDynamicLibrary, path: directory,
                reason: "the package has no `.library(type: .dynamic)` product; a plugin must vend one")
        }
        product = name
    }

    /// SwiftPM's incremental build can miss a save dated within about a
    /// second of the previous save or of the previous build's start (measured
    /// with plain `swift build`: 2 of 8 such saves built the old source).
    /// For those saves this removes the swift-driver's incremental state
    /// (`.swiftdeps`, `.priors`) of the targets they belong to, so the next
    /// build recompiles those targets whole; other saves keep the incremental
    /// build. The user's files are never touched. Returns the newest save's
    /// time, for the next call.
    @discardableResult
    public func forgetIncrementalStateIfTooRecent(_ paths: [String], previousBuildStart: Date?, previousSave: Date?) -> Date? {
        let saved = paths.compactMap { path -> Date? in
            let attributes = try? FileManager.default.attributesOfItem(atPath: "\(packageDirectory)/\(path)")
            return attributes?[.modificationDate] as? Date
        }
        guard let newest = saved.max() else { return previousSave }
        let window: TimeInterval = 1.1
        let tooRecent = saved.contains { save in
            [previousBuildStart, previousSave].compactMap { $0 }.contains { abs(save.timeIntervalSince($0)) < window }
        }
        guard tooRecent else { return newest }
        let folder = "\(packageDirectory)/.build/debug"
        // Sources/<Target>/...: that target; anything else (the manifest, a resource): every target.
        let targets = paths.map { path -> String? in
            let parts = path.split(separator: "/")
            return parts.count > 2 && parts[0] == "Sources" ? String(parts[1]) : nil
        }
        let onlyThese = targets.allSatisfy { $0 != nil } ? Set(targets.compactMap { $0 }) : nil
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names where name.hasSuffix(".build") && onlyThese.map({ $0.contains(String(name.dropLast(6))) }) ?? true {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: "\(folder)/\(name)")) ?? []
            where file.hasSuffix(".swiftdeps") || file.hasSuffix(".priors") {
                try? FileManager.default.removeItem(atPath: "\(folder)/\(name)/\(file)")
            }
        }
        return newest
    }

    /// The built library.
    public var libraryPath: String { "\(packageDirectory)/.build/debug/lib\(product).so" }

    /// Runs an (incremental) `swift build` of the product.
    public func build() -> Build {
        let start = ContinuousClock.now
        let result = Self.run(swift, ["build", "--package-path", packageDirectory, "--product", product])
        let elapsed = ContinuousClock.now - start
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var diagnostics: [String] = []
        for (index, line) in lines.enumerated() where line.contains("error:") || line.contains("warning:") {
            // The diagnostic line and the source excerpt after it.
            diagnostics.append(line)
            diagnostics += lines[(index + 1)..<min(lines.count, index + 4)].filter { $0.contains("|") }
        }
        return Build(
            succeeded: result.status == 0, diagnostics: diagnostics, output: result.output,
            milliseconds: elapsed.milliseconds)
    }

    /// Runs `executable` through env; stderr goes with stdout unless `mergingErrors` is false.
    static func run(_ executable: String, _ arguments: [String], mergingErrors: Bool = true) -> (status: Int32, output: String, errors: String) {
        // Through env, which finds `executable` on PATH (posix_spawn does not
        // search it); its --default-signal is kept from when the child
        // inherited the session's ignored SIGINT/SIGTERM (ChildProcess now
        // resets every signal).
        let arguments = ["--default-signal=INT,TERM", executable] + arguments
        defer { running.withLock { $0 = nil } }
        do {
            let ending = try ChildProcess.run(
                "/usr/bin/env", arguments, output: .captured, errors: mergingErrors ? nil : .captured,
                started: { pid in running.withLock { $0 = pid } })
            return (ending.status, String(decoding: ending.output, as: UTF8.self), String(decoding: ending.errors, as: UTF8.self))
        } catch {
            return (127, "\(error)", "")
        }
    }

    /// The `swift` process running now (its process group's id), if any:
    /// one build at a time.
    private static let running = Mutex<pid_t?>(nil)

    /// Stops a running build (for Ctrl-C in a dev session): the whole
    /// process group, since the compilers `swift build` started would
    /// otherwise live on and keep its output pipe open.
    public static func cancelRunningBuild() {
        running.withLock { pid in
            // The child leads its own process group (`ChildProcess`).
            if let pid { kill(-pid, SIGTERM) }
        }
    }
}
