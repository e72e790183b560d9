import Foundation
import Plugboard
import PlugboardDemo
import PlugboardHost
import Testing

/// Every bad input the loader handles, each beside two good plugins that must
/// still load: the specific code and status, a reason naming the problem, and
/// the registry holding exactly the good plugins' providers.
@Suite struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let code: String
        let status: PluginStatus
        /// Text the reason must contain.
        let mentions: String
        /// Whether the bad file's code carries ConstructorMarkC (an ELF
        /// constructor that writes PLUGBOARD_FIXTURE_MARKER): checked never to
        /// have run, in a scanner or in this process.
        var constructorMark = false
        /// Puts the bad file(s) into the directory.
        let make: @Sendable (TemporaryDirectory) throws -> Void
        var description: String { name }
    }

    static func fixture(_ name: String, code: String, status: PluginStatus = .rejected, mentions: String) -> Case {
        Case(name: name, code: code, status: status, mentions: mentions) { try $0.copy(Fixtures.library(name), as: "bad.so") }
    }

    /// The SDK ABI this host was built with (the expected texts follow it across bumps).
    static let host = Fixtures.baseline.sdkABI
    static let future = "\(host.major).\(host.minor + 1)"

    static let cases: [Case] = [
        // Descriptor and lifecycle fixtures, built broken on purpose.
        fixture("NoEntry", code: "no-entry-symbol", mentions: "plugboard_entry"),
        fixture("NullDescriptor", code: "null-descriptor", mentions: "null descriptor"),
        fixture("BadMagic", code: "bad-magic", mentions: "0xdeadbeef"),
        fixture("BadLayout", code: "descriptor-layout", mentions: "layout 99"),
        fixture("ABIMajor", code: "sdk-abi-mismatch", mentions: "SDK ABI \(host.major + 1).\(host.minor), the host has SDK ABI \(host)"),
        fixture("ABINewer", code: "sdk-too-new", mentions: "SDK ABI \(host.major).9, newer than the host's SDK ABI \(host)"),
        fixture("ForeignToolchain", code: "toolchain-mismatch", mentions: "99.0.0"),
        fixture("InvalidID", code: "invalid-id", mentions: "is not reverse-DNS"),
        fixture("InitThrows", code: "init-failed", status: .failed, mentions: "init refused on purpose"),
        fixture("ActivateThrows", code: "activate-failed", status: .failed, mentions: "activate refused on purpose"),
        fixture("InterfaceNewer", code: "interface-version", mentions: "plugboard.command 1.1.0, the host offers plugboard.command 1.0.0"),
        fixture("WrongProvider", code: "provider-type-mismatch", status: .failed, mentions: "the host expects Plugboard.Command"),
        fixture("MissingProvider", code: "missing-provider", status: .failed, mentions: "no provider"),
        // Refused from the file's bytes: no code of theirs runs anywhere.
        fixture("EntryData", code: "entry-not-function", mentions: "data object"),
        fixture("NoMarker", code: "no-sdk-marker", mentions: "plugboard_sdk_abi_"),
        Case(name: "C library with entry symbol, ABI marker and a constructor", code: "not-swift-plugin", status: .rejected,
             mentions: "no Swift type metadata", constructorMark: true) { dir in
            try dir.copy(Fixtures.library("CMarker"), as: "bad.so")
        },
        Case(name: "plugin built for SDK 1.x (old marker, API that 2.0 removed)", code: "sdk-abi-mismatch", status: .rejected,
             mentions: "compiled against SDK ABI 1.0, the host has SDK ABI \(host)", constructorMark: true) { dir in
            try dir.copy(Fixtures.library("OldMajor"), as: "bad.so")
        },
        // Built against a "future" SDK (ABI 2.1 with extra API, made by make-future-sdk).
        Case(name: "FutureAPI", code: "missing-sdk-symbols", status: .rejected,
             mentions: "Plugboard.futureOnlyAPI(Swift.Int) -> Swift.Int (plugin built against SDK ABI \(future), host has SDK \(Fixtures.baseline.sdkVersion) (ABI \(host)))") {
            try $0.copy(Fixtures.futureLibrary("FutureAPI"), as: "bad.so")
        },
        Case(name: "FutureABI", code: "sdk-too-new", status: .rejected, mentions: "SDK ABI \(future)") {
            try $0.copy(Fixtures.futureLibrary("FutureABI"), as: "bad.so")
        },
        Case(name: "Embedded SDK", code: "sdk-embedded", status: .rejected, mentions: ".product(name: \"Plugboard\"") {
            try $0.copy(Fixtures.embeddedLibrary("Embedded"), as: "bad.so")
        },
        // Files that are not plugins at all.
        Case(name: "truncated copy", code: "malformed-elf", status: .rejected, mentions: "truncated") { dir in
            let data = try Data(contentsOf: Fixtures.library("Alpha"))
            try dir.write(data.prefix(data.count / 2), as: "bad.so")
        },
        Case(name: "random bytes", code: "not-elf", status: .rejected, mentions: "no ELF magic") { dir in
            var generator = SystemRandomNumberGenerator()
            try dir.write(Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &generator) }), as: "bad.so")
        },
        Case(name: "empty file", code: "empty-file", status: .rejected, mentions: "empty") { try $0.write(Data(), as: "bad.so") },
        Case(name: "directory named x.so", code: "not-a-file", status: .rejected, mentions: "directory") { dir in
            try FileManager.default.createDirectory(atPath: dir.file("bad.so"), withIntermediateDirectories: false)
        },
        Case(name: "unreadable file", code: "unreadable", status: .rejected, mentions: "read permission") { dir in
            let path = try dir.copy(Fixtures.library("Gamma"), as: "bad.so")
            chmod(path, 0)
        },
        Case(name: "broken symlink", code: "unreadable", status: .rejected, mentions: "broken symlink") { dir in
            symlink(dir.file("nowhere.so"), dir.file("bad.so"))
        },
        Case(name: "symlink to a plugin in the same directory", code: "duplicate-file", status: .rejected, mentions: "a.so") { dir in
            symlink(dir.file("a.so"), dir.file("bad.so"))
        },
        Case(name: "another architecture", code: "wrong-architecture", status: .rejected, mentions: "built for aarch64") { dir in
            let path = try dir.copy(Fixtures.library("Gamma"), as: "bad.so")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: 18)  // e_machine
            try handle.write(contentsOf: [183, 0])
            try handle.close()
        },
        Case(name: "another toolchain (.comment)", code: "toolchain-mismatch", status: .rejected, mentions: Fixtures.toolchainPatch.foreignText) { dir in
            let path = try dir.copy(Fixtures.library("Gamma"), as: "bad.so")
            try patchBytes(at: path, replacing: Fixtures.toolchainPatch.current, with: Fixtures.toolchainPatch.foreign)
        },
        // A symbol's name offset just past its string table's end, and near
        // the top of the 32-bit range: refused from the bytes, never read.
        Case(name: "a symbol named from the end of its string table", code: "malformed-elf", status: .rejected,
             mentions: "out of range in .dynsym strings") { dir in
            let path = try dir.copy(Fixtures.library("Gamma"), as: "bad.so")
            try pointFirstExportedSymbolName(at: path) { stringTableSize in UInt32(stringTableSize) }
        },
        Case(name: "a symbol named from far past its string table", code: "malformed-elf", status: .rejected,
             mentions: "string offset 4294967280 out of range in .dynsym strings") { dir in
            let path = try dir.copy(Fixtures.library("Gamma"), as: "bad.so")
            try pointFirstExportedSymbolName(at: path) { _ in 0xFFFF_FFF0 }
        },
        Case(name: "object file, not a shared object", code: "not-shared-object", status: .rejected, mentions: "type 1") { dir in
            let object = Fixtures.repository.appendingPathComponent("Tests/Fixtures/.build/debug/Gamma.build/Gamma.swift.o")
            try dir.copy(object, as: "bad.so")
        },
        Case(name: "same id, lower version", code: "duplicate-id", status: .rejected, mentions: "also provided by") { dir in
            try dir.copy(Fixtures.library("AlphaOld"), as: "0-alpha-old.so")
        },
    ]

    @Test(arguments: cases)
    func badInputIsReportedAndGoodPluginsStillLoad(_ testCase: Case) throws {
        let dir = try TemporaryDirectory(), images = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try dir.copy(Fixtures.library("Alpha"), as: "a.so")
        try dir.copy(Fixtures.library("Beta"), as: "b.so")
        try testCase.make(dir)

        // The marker goes to this host's scanners only: the process's own
        // environment is never changed (tests run in parallel, and every
        // host's scanners would see it).
        let marker = dir.file("constructor-ran")
        let host = PluginHost(configuration: .with(
            pluginsDirectory: dir.path, imagesDirectory: images.path, cacheDirectory: cache.path,
            scanner: ScannerSettings(extraEnvironment: ["PLUGBOARD_FIXTURE_MARKER": marker])))
        defer { host.shutdown() }
        host.declareDemoExtensionPoints()
        let records = try host.loadAll()

        let bad = try #require(records.first { $0.status != .active })
        #expect(bad.code == testCase.code, "\(bad.message)")
        #expect(bad.status == testCase.status)
        #expect(bad.reason?.contains(testCase.mentions) == true, "reason was: \(bad.reason ?? "nil")")
        #expect(bad.error?.message.hasPrefix(bad.path) == true, "the message names the file")
        #expect(records.filter { $0.status == .active }.compactMap(\.id).sorted() == ["fixture.alpha", "fixture.beta"])
        #expect(host.registry.providers(of: Commands.self).map(\.name) == ["alpha", "beta"])
        #expect(try host.registry.providers(of: Commands.self)[1].run(arguments: ["ok"]) == "beta ok")
        #expect(!FileManager.default.fileExists(atPath: marker), "a refused file's constructor ran in a scanner")
        if testCase.constructorMark {
            // In this process the constructor would read this process's
            // environment, which has no marker: here the proof is that no
            // image the host mapped (from its images directory) has the bad
            // file's bytes. The good plugins' images are found there, so the
            // check looks in the right place.
            let mapped = mappedFiles(under: images.path)
            #expect(mapped.count >= 2, "the active plugins' images are in /proc/self/maps: \(mapped.sorted())")
            let badBytes = try Data(contentsOf: URL(fileURLWithPath: dir.file("bad.so")))
            for file in mapped {
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != badBytes, "the refused file was mapped in the host: \(file)")
            }
        }
    }
}

extension PluginRecord {
    var message: String { error?.message ?? "active" }
}

/// Sets `st_name` of the first GLOBAL or WEAK entry of the file's `.dynsym`
/// (an ELF64 little-endian shared object) to what `offset` makes of the size
/// of its string table.
private func pointFirstExportedSymbolName(at path: String, to offset: (Int) -> UInt32) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
    func u64(_ at: Int) -> Int { u32(at) | u32(at + 4) << 32 }
    let sectionHeaders = u64(40), count = u16(60)
    for index in 0..<count {
        let header = sectionHeaders + index * 64
        guard u32(header + 4) == 11 else { continue }  // SHT_DYNSYM
        let table = u64(header + 24), size = u64(header + 32)
        let strings = sectionHeaders + u32(header + 40) * 64  // sh_link: its string table
        let value = offset(u64(strings + 32))
        for entry in stride(from: table + 24, to: table + size, by: 24) where [1, 2].contains(bytes[entry + 4] >> 4) {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(entry..<(entry + 4), with: $0) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return
        }
    }
    throw PatternNotFound()
}
