import Foundation
import Testing

extension SwiftPMBuilding {
    /// `plugboard dev` on a copy of the Greeter example, edited like a person would.
    @Suite(.serialized) struct DevLoopTests {
        /// Reads JSON lines from a running `plugboard dev --json`.
        final class Session {
            let process = Process()
            let lines = LineReader()
            /// The steps of the last `plan` event (a reload that touches other plugins).
            var plan: [String]?
            /// Every line read so far, skipped ones included: a failure shows
            /// what the session did (which change superseded a build, and so on).
            var history: [String] = []

            /// `cache`: where its host keeps the registry cache and crash journal
            /// (`dev` takes no `--cache`: its default is under XDG_CACHE_HOME).
            init(package: String, data: String, cache: String, options: [String] = []) throws {
                process.executableURL = try Fixtures.executable("plugboard")
                process.arguments = ["dev", package, "--json", "--data", data, "--run", "greet Ada"] + options
                process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": cache]) { $1 }
                let out = Pipe()
                process.standardOutput = out
                process.standardError = FileHandle.nullDevice
                lines.attach(out.fileHandleForReading)
                try process.run()
            }

            /// The next event, waiting up to `timeout` seconds; skips those named
            /// in `skipping`, and keeps a plan's steps in ``plan``.
            func next(timeout: Double = 180, skipping: Set<String> = ["build-started"]) -> [String: Any]? {
                let deadline = Date().addingTimeInterval(timeout)
                while let line = lines.next(until: deadline) {
                    history.append(line)
                    guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                    if let name = event["event"] as? String, skipping.contains(name) { continue }
                    if event["event"] as? String == "plan" {
                        plan = event["steps"] as? [String]
                        continue
                    }
                    return event
                }
                return nil
            }

            /// Expects `event` to be named `name`; a failure lists the session's events.
            func expect(_ event: [String: Any], is name: String, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(event["event"] as? String == name, "events so far:\n\(history.joined(separator: "\n"))", sourceLocation: sourceLocation)
            }

            func stop() -> Int32 {
                process.terminate()
                process.waitUntilExit()
                return process.terminationStatus
            }
        }

        final class LineReader: @unchecked Sendable {
            // @unchecked: `buffer` and `pending` are only touched under `condition`.
            private let condition = NSCondition()
            private var pending: [String] = []
            private var buffer = Data()

            func attach(_ handle: FileHandle) {
                handle.readabilityHandler = { [self] handle in
                    let data = handle.availableData
                    condition.lock()
                    buffer.append(data)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        pending.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...newline)
                    }
                    condition.broadcast()
                    condition.unlock()
                    if data.isEmpty { handle.readabilityHandler = nil }
                }
            }

            func next(until deadline: Date) -> String? {
                condition.lock()
                defer { condition.unlock() }
                while pending.isEmpty {
                    if !condition.wait(until: deadline) { return nil }
                }
                return pending.removeFirst()
            }
        }

        @Test func editsReloadLiveAndFailuresNeverCostTheWorkingVersion() throws {
            let work = try TemporaryDirectory("plugboard-dev")
            let package = work.url.appendingPathComponent("Greeter")
            try FileManager.default.copyItem(at: Fixtures.repository.appendingPathComponent("Plugins/Greeter"), to: package)
            try? FileManager.default.removeItem(at: package.appendingPathComponent(".build"))
            let manifest = package.appendingPathComponent("Package.swift")
            let sdk = Fixtures.repository.appendingPathComponent("SDK").path
            try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "../../SDK", with: sdk)
                .write(to: manifest, atomically: true, encoding: .utf8)
            let source = package.appendingPathComponent("Sources/Greeter/Greeter.swift")
            let original = try String(contentsOf: source, encoding: .utf8)
            // Like an editor: write a temporary file, then rename it over the source.
            var lastStamp = Date()
            /// `spaced`: dated at least 1.1 s after the previous save and now.
            /// SwiftPM's incremental build misses a save dated within about a
            /// second of the one before or of the previous build's start
            /// (docs/hot-reload.md); `plugboard dev` makes up for it (step 6
            /// saves at once), and the other steps do not depend on that.
            func save(_ text: String, spaced: Bool = true) throws {
                let temporary = source.deletingLastPathComponent().appendingPathComponent(".Greeter.swift.tmp")
                try text.write(to: temporary, atomically: false, encoding: .utf8)
                lastStamp = spaced ? max(Date(), lastStamp.addingTimeInterval(1.1)) : Date()
                try FileManager.default.setAttributes([.modificationDate: lastStamp], ofItemAtPath: temporary.path)
                _ = rename(temporary.path, source.path)
            }
            func edit(_ from: String, _ to: String, spaced: Bool = true) throws {
                let text = try String(contentsOf: source, encoding: .utf8)
                #expect(text.contains(from), "test edit target missing: \(from)")
                try save(text.replacingOccurrences(of: from, with: to), spaced: spaced)
            }

            // A plugin that requires the greeter: each reload stops it first and
            // starts it again on the new generation, with its state.
            try FileManager.default.createDirectory(atPath: work.file("plugins"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = try work.copy(Fixtures.library("DepOnGreeter"), as: "plugins/DepOnGreeter.so")
            let plugins = ["--plugins", work.file("plugins")]
            let session = try Session(package: package.path, data: work.file("data"), cache: work.file("cache"), options: plugins)
            defer { _ = session.stop() }

            let ready = try #require(session.next())
            session.expect(ready, is: "ready")
            #expect(ready["generation"] as? Int == 1)
            #expect(ready["id"] as? String == "dev.plugboard.example.greeter")
            #expect((ready["output"] as? String)?.hasPrefix("Hello, Ada! (greeting 1 this session") == true)

            // 1. New output, state (the session count) preserved.
            try edit(#""greeting": .string("Hello")"#, #""greeting": .string("Howdy")"#)
            let reloaded = try #require(session.next())
            session.expect(reloaded, is: "reloaded")
            #expect(reloaded["generation"] as? Int == 2)
            #expect((reloaded["output"] as? String)?.hasPrefix("Howdy, Ada! (greeting 2 this session") == true)
            #expect(reloaded["state"] as? String == "state handed over")
            #expect(session.plan == [
                "stop fixture.dep.on-greeter", "switch dev.plugboard.example.greeter 1.1.0 → 1.1.0", "start fixture.dep.on-greeter again",
            ])
            #expect(reloaded["steps"] as? [String] == ["fixture.dep.on-greeter gen 2 (state handed over)"])

            // SIGUSR1: a status snapshot of every plugin.
            kill(session.process.processIdentifier, SIGUSR1)
            let status = try #require(session.next())
            session.expect(status, is: "status")
            // A rebuilt file was loaded: the session's host says it is tainted.
            #expect((status["taint"] as? [[String: Any]])?.map { $0["code"] as? String } == ["dev-build-loaded"], "\(String(describing: status["taint"]))")
            let snapshot = try #require(status["plugins"] as? [[String: Any]])
            let greeter = try #require(snapshot.first { $0["id"] as? String == "dev.plugboard.example.greeter" })
            #expect(greeter["status"] as? String == "active")
            #expect(greeter["generation"] as? Int == 2)
            #expect(snapshot.first { $0["id"] as? String == "fixture.dep.on-greeter" }?["generation"] as? Int == 2)

            // SIGHUP: --plugins looked at again; a plugin installed since is added.
            _ = try work.copy(Fixtures.library("Gamma"), as: "plugins/.gamma.so.partial")
            #expect(rename(work.file("plugins/.gamma.so.partial"), work.file("plugins/gamma.so")) == 0)
            kill(session.process.processIdentifier, SIGHUP)
            let refreshed = try #require(session.next())
            session.expect(refreshed, is: "refreshed")
            #expect(refreshed["steps"] as? [String] == ["added fixture.gamma (available)"])
            let ms = try #require(reloaded["ms"] as? [String: Double])
            #expect(Set(ms.keys) == ["detect", "build", "verify", "load", "switch"])

            // 2. A compile error: diagnostics shown, the old generation still serves.
            try edit("func activate() throws {", "func activate() throws { let broken: Int = \"x\";")
            let failed = try #require(session.next())
            session.expect(failed, is: "build-failed")
            #expect(failed["generation"] as? Int == 2)
            #expect((failed["diagnostics"] as? [String])?.contains { $0.contains("error:") } == true)
            #expect((failed["output"] as? String)?.hasPrefix("Howdy, Ada! (greeting 3 this session") == true)

            // 3. Fixed: the generation advances.
            try edit("func activate() throws { let broken: Int = \"x\";", "func activate() throws {")
            let fixed = try #require(session.next())
            session.expect(fixed, is: "reloaded")
            #expect(fixed["generation"] as? Int == 3)

            // 4. Activation throws: rolled back, state intact.
            try edit("func activate() throws {", "func activate() throws { throw CancellationError();")
            let rolledBack = try #require(session.next())
            session.expect(rolledBack, is: "rolled-back")
            #expect(rolledBack["code"] as? String == "activate-failed")
            #expect(rolledBack["generation"] as? Int == 3)
            #expect((rolledBack["output"] as? String)?.hasPrefix("Howdy, Ada! (greeting 5 this session") == true)

            // 5. Verification crashes: the host (this session) lives on.
            try edit("func activate() throws { throw CancellationError();", "func activate() throws { fatalError(\"boom\");")
            let crashed = try #require(session.next())
            session.expect(crashed, is: "rejected")
            #expect(crashed["code"] as? String == "verify-crashed")
            #expect((crashed["output"] as? String)?.hasPrefix("Howdy, Ada! (greeting 6 this session") == true)

            try save(original)
            let restored = try #require(session.next())
            session.expect(restored, is: "reloaded")
            #expect(restored["generation"] as? Int == 4)
            #expect((restored["output"] as? String)?.hasPrefix("Hello, Ada! (greeting 7 this session") == true)

            // 6. Saved again while the build of the previous save runs: that
            // build is superseded (neither loaded nor reported failed), the
            // newest save is built once and loaded. Saved at once, not spaced.
            try edit(#""greeting": .string("Hello")"#, #""greeting": .string("Hi")"#, spaced: false)
            let building = try #require(session.next(skipping: []))
            session.expect(building, is: "build-started")
            try edit(#""greeting": .string("Hi")"#, #""greeting": .string("Hey")"#, spaced: false)
            let superseded = try #require(session.next())
            session.expect(superseded, is: "build-superseded")
            #expect(superseded["changed"] as? [String] == ["Sources/Greeter/Greeter.swift"])
            let newest = try #require(session.next())
            session.expect(newest, is: "reloaded")
            #expect(newest["generation"] as? Int == 5)
            #expect((newest["output"] as? String)?.hasPrefix("Hey, Ada!") == true, "\(newest)")

            // 7. Saves right after the previous one was loaded, within a second
            // of it: the ones SwiftPM's incremental build can miss (about a
            // quarter of them) unless `plugboard dev` makes up for it.
            var word = "Hey", generation = 5
            for next in ["Hola", "Salut", "Ciao", "Hallo"] {
                try edit(#""greeting": .string("\#(word)")"#, #""greeting": .string("\#(next)")"#, spaced: false)
                let quick = try #require(session.next())
                generation += 1
                session.expect(quick, is: "reloaded")
                #expect(quick["generation"] as? Int == generation)
                #expect((quick["output"] as? String)?.hasPrefix("\(next), Ada!") == true, "built the previous source: \(quick)")
                word = next
            }
            #expect(session.stop() == 0)

            // --dry-run: each save is verified and planned, never reloaded.
            let dry = try Session(package: package.path, data: work.file("data"), cache: work.file("cache"), options: plugins + ["--dry-run"])
            defer { _ = dry.stop() }
            dry.expect(try #require(dry.next()), is: "ready")
            try edit(#""greeting": .string("Hallo")"#, #""greeting": .string("Howdy")"#)
            let planned = try #require(dry.next())
            dry.expect(planned, is: "planned")
            #expect(planned["generation"] as? Int == 1)
            #expect((planned["steps"] as? [String])?.first == "stop fixture.dep.on-greeter")
            #expect(dry.stop() == 0)
        }
    }
}
