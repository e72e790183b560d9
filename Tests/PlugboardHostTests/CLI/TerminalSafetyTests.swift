import PlugboardHost
import Foundation
import Testing

/// Strings from plugin files and plugin code reach a person's terminal only
/// escaped: one case per field, each carrying an escape sequence (clear the
/// screen) and a newline followed by a fake line, asserting what `list`,
/// `inspect` and `run` write (stdout and stderr, a pipe: the tool adds no
/// colour of its own) and that `--json` still holds the exact value.
@Suite struct TerminalSafetyTests {
    /// What an attacker writes: clear the screen, then a new line of its own.
    static let payload = "\u{1B}[2J\nAll plugins OK"
    /// How the terminal must receive it.
    static let shown = "\\u{1B}[2J\\nAll plugins OK"

    /// `payload` fitted to `length` bytes (patches keep a file's layout).
    static func hostile(length: Int) -> [UInt8] {
        let bytes = Array(payload.utf8)
        return bytes.count >= length ? Array(bytes.prefix(length)) : bytes + Array(repeating: UInt8(ascii: "x"), count: length - bytes.count)
    }

    struct Case: Sendable, CustomStringConvertible {
        let field: String
        /// The code the file gets, if it is refused for the field.
        let code: String?
        /// How the terminal shows it, when not as ``TerminalSafetyTests/shown``.
        var shown: String = TerminalSafetyTests.shown
        /// Whether `list` shows the field (it shows no toolchain of a good file).
        var inList = true
        /// Places the hostile plugin in the folder; returns its file name.
        let place: @Sendable (TemporaryDirectory) throws -> String
        var description: String { field }
    }

    /// A copy of `fixture` with `placeholder` replaced by the payload.
    static func patched(_ fixture: String, _ placeholder: String) -> @Sendable (TemporaryDirectory) throws -> String {
        { dir in
            let file = try dir.copy(Fixtures.library(fixture), as: "hostile.so")
            try patchBytes(at: file, replacing: Array(placeholder.utf8), with: hostile(length: placeholder.utf8.count))
            return "hostile.so"
        }
    }

    static let cases: [Case] = [
        Case(field: "plugin id", code: "invalid-id", place: patched("HostileStrings", "fixture.placeholder-plugin-id")),
        Case(field: "plugin version", code: "invalid-descriptor", place: patched("HostileVersion", "1.0.placeholder-version-field")),
        Case(field: "service id", code: "invalid-service", place: patched("HostileStrings", "fixture.placeholder-service")),
        Case(field: "activation trigger", code: "invalid-trigger", place: patched("HostileStrings", "fixture.placeholder-trigger")),
        Case(field: "toolchain (.comment)", code: nil, inList: false, place: patched("Gamma", "clang version 21.0.0")),
        Case(field: "needed library", code: nil, place: patched("Gamma", "libswift_RegexParser.so")),
        // Its tail is split into lines; the fixture writes ESC[2J ESC[H then the line.
        Case(field: "scanner stderr tail", code: "scan-crashed", shown: "\\u{1B}[2J\\u{1B}[HAll plugins OK") { dir in
            try dir.copy(Fixtures.library("ScreenPainter"), as: "hostile.so")
            return "hostile.so"
        },
        Case(field: "file name", code: nil) { dir in
            let name = "\u{1B}[2J\nAll plugins OK.so"
            try dir.copy(Fixtures.library("Gamma"), as: name)
            return name
        },
    ]

    func plugboard(_ arguments: [String]) throws -> ProcessResult {
        try runProcess(Fixtures.executable("plugboard"), arguments, environment: ["SWIFT_BACKTRACE": "enable=no"])
    }

    /// What reached the terminal holds no escape byte and no line of the
    /// attacker's, and shows the payload escaped.
    func expectSafe(_ result: ProcessResult, _ what: String, showsPayload: Bool = true, shown: String = Self.shown) {
        let text = result.stdout + result.stderr
        #expect(!text.unicodeScalars.contains("\u{1B}"), "\(what): a raw ESC reached the terminal:\n\(text)")
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("All plugins OK") }, "\(what): a forged line:\n\(text)")
        if showsPayload { #expect(text.contains(shown), "\(what): the payload is not shown escaped:\n\(text)") }
    }

    @Test(arguments: cases)
    func aFieldFromAPluginReachesTheTerminalEscaped(_ testCase: Case) throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let name = try testCase.place(dir)
        let options = ["--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")]

        let listed = try plugboard(["list"] + options)
        expectSafe(listed, "list", showsPayload: testCase.inList, shown: testCase.shown)
        let inspected = try plugboard(["inspect", dir.file(name)] + options.dropFirst(2))
        expectSafe(inspected, "inspect", shown: testCase.shown)
        let ran = try plugboard(["run", "alpha"] + options)
        #expect(ran.status == 0, "\(ran.stderr)")
        // run reports refused files only; an available one says nothing.
        expectSafe(ran, "run", showsPayload: testCase.code != nil && testCase.inList, shown: testCase.shown)

        // JSON is exact: the record holds the value as it is (or, refused,
        // the code of its own and a reason quoting it escaped).
        let json = try plugboard(["list", "--json"] + options)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let plugins = try #require(object["plugins"] as? [[String: Any]])
        let record = try #require(plugins.first { ($0["path"] as? String)?.hasSuffix("/" + name) == true }, "\(json.stdout)")
        if let code = testCase.code { #expect(record["code"] as? String == code, "\(record)") }
        if testCase.field == "file name" { #expect((record["path"] as? String)?.contains(Self.payload) == true) }
    }

    /// A command name of 100,000 characters in "no plugin provides" is capped.
    @Test func aHugeCommandNameIsCappedWithAnEllipsis() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        let name = Self.payload + String(repeating: "y", count: 100_000)
        let result = try plugboard(["run", name, "--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")])
        #expect(result.status == 1)
        #expect(result.stderr.utf8.count < 2_000, "\(result.stderr.utf8.count) bytes")
        #expect(result.stderr.contains("no plugin provides command '\(Self.shown)"), "\(result.stderr.prefix(300))")
        #expect(result.stderr.contains("… (\(name.unicodeScalars.count - 200) more characters)"), "\(result.stderr.suffix(300))")
        expectSafe(result, "run")
    }

    /// A command name from plugin code is escaped in the list of those available.
    @Test func aCommandNameFromPluginCodeIsEscapedInTheAvailableList() throws {
        let dir = try TemporaryDirectory(), work = try TemporaryDirectory()
        _ = try Self.patched("HostileStrings", "placeholder-command-name")(dir)
        let result = try plugboard(["run", "missing", "--plugins", dir.path, "--cache", work.file("cache"), "--data", work.file("data")])
        #expect(result.status == 1)
        expectSafe(result, "run")
    }
}

/// The escaping rule itself, character class by character class.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("plain text é✓", "plain text é✓"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\u{1B}[31mred", "\\u{1B}[31mred"),
        ("nul\u{0}del\u{7F}", "nul\\u{0}del\\u{7F}"),
        ("c1\u{85}\u{9B}", "c1\\u{85}\\u{9B}"),
        ("bidi\u{202E}txt.so", "bidi\\u{202E}txt.so"),
    ])
    func controlsBecomeVisibleEscapes(_ text: String, _ expected: String) {
        #expect(TerminalText.escaped(text) == expected)
    }

    @Test func longTextIsCutWithAnEllipsisSayingHowMuch() {
        #expect(TerminalText.escaped(String(repeating: "x", count: 250), limit: 200) == String(repeating: "x", count: 200) + "… (50 more characters)")
        #expect(TerminalText.escaped(String(repeating: "x", count: 200), limit: 200) == String(repeating: "x", count: 200))
    }
}
