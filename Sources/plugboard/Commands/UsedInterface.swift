import FoundationEssentials
import PlugboardCommandLine

/// An interface package a new plugin provides the points of (`plugboard new
/// NAME --uses-interface PATH`): its library product, its module, and the
/// extension points its sources declare, read from the package's files.
struct UsedInterface {
    struct Point {
        /// The `ExtensionPoint` type, and its provider protocol.
        let point: String
        let provider: String
        /// The provider protocol asks only for `name` (as `plugboard new
        /// --interface` writes it): the scaffold can write a provider.
        let nameOnly: Bool
    }

    let path: String
    let product: String
    let module: String
    let points: [Point]

    /// What `.product(name:package:)` calls the package: its folder's name.
    var identity: String { String(path.split(separator: "/").last ?? "") }

    static func read(_ path: String, command: String) throws(UsageError) -> UsedInterface {
        guard let manifest = try? String(contentsOfFile: path + "/Package.swift", encoding: .utf8) else {
            throw UsageError(message: "\(path) is not a package (no readable Package.swift); give the folder `plugboard new NAME --interface` made", command: command)
        }
        // Its dynamic library: `.library(name: "X", type: .dynamic, targets: ["Y"])`.
        guard let library = manifest.firstMatch(of: #/\.library\(\s*name:\s*"(\w+)"[^)]*targets:\s*\[\s*"(\w+)"/#) else {
            throw UsageError(message: "\(path)/Package.swift declares no library product; an interface package vends one .dynamic library", command: command)
        }
        let module = String(library.output.2)
        let sources = path + "/Sources/" + module
        let files = (try? FileManager.default.contentsOfDirectory(atPath: sources))?.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        let text = files.compactMap { try? String(contentsOfFile: sources + "/" + $0, encoding: .utf8) }.joined(separator: "\n")
        var points: [Point] = []
        for match in text.matches(of: #/public\s+enum\s+(\w+)\s*:\s*[\w\s,&]*ExtensionPoint[\w\s,&]*\{/#) {
            let body = text[match.range.upperBound...]
            guard let provider = body.firstMatch(of: #/public\s+typealias\s+Provider\s*=\s*any\s+(\w+)/#) else { continue }
            let name = String(provider.output.1)
            points.append(Point(point: String(match.output.1), provider: name, nameOnly: requirements(of: name, in: text) == ["var name: String { get }"]))
        }
        guard !points.isEmpty else {
            throw UsageError(message: "\(sources) declares no public ExtensionPoint; give an interface package's folder", command: command)
        }
        return UsedInterface(path: path, product: String(library.output.1), module: module, points: points)
    }

    /// The requirements of protocol `name` in `text`, one line each, comments left out.
    private static func requirements(of name: String, in text: String) -> [String]? {
        guard let start = text.firstMatch(of: try! Regex("public\\s+protocol\\s+\(name)\\b[^{]*\\{")) else { return nil }
        var depth = 1
        var body = ""
        for character in text[start.range.upperBound...] {
            if character == "{" { depth += 1 }
            if character == "}" { depth -= 1 }
            if depth == 0 { break }
            body.append(character)
        }
        return body.split(separator: "\n").map { line in
            String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
    }
}
