#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What Plugboard reads from a plugin file before loading it: machine, linked
/// libraries, search paths, dynamic symbols, notes and the toolchain comment.
///
/// Why not just `dlopen` and look? `dlopen` runs the plugin's initializers
/// (static constructors, Swift metadata registration) and maps its
/// dependencies, so any compatibility check made afterwards is too late: a
/// plugin built for the wrong machine or toolchain has already executed code
/// in the host. Everything here is read from the file bytes only, and the
/// parser treats the file as hostile: every offset and size is bounds-checked
/// with overflow-safe arithmetic, so bad input yields a `ReadError`, never a
/// trap.
package struct ELFImage: Sendable {
    package enum ReadError: Error, Equatable, Sendable {
        /// `open`/`fstat`/`mmap` failed; carries `errno` (ENOENT, EACCES, ...).
        case cannotOpen(errno: Int32)
        /// A directory, fifo, device or socket.
        case notRegularFile
        case empty
        /// Bad magic, or fewer than 4 bytes.
        case notELF
        /// `EI_CLASS` is not ELFCLASS64.
        case unsupportedClass(UInt8)
        /// `EI_DATA` is not little endian.
        case unsupportedByteOrder(UInt8)
        case wrongMachine(found: UInt16, expected: UInt16)
        /// `e_type` is not ET_DYN (3). PIE executables are ET_DYN too.
        case notSharedObject(type: UInt16)
        /// Names the structure that runs past the end of the file.
        case truncated(String)
        /// Internally inconsistent headers, e.g. "e_shstrndx out of range".
        case malformed(String)
    }

    struct Symbol: Sendable, Hashable {
        let name: String
        /// `st_shndx != SHN_UNDEF`: the file provides it rather than needs it.
        let isDefined: Bool
        let isWeak: Bool
        /// STT_FUNC or STT_GNU_IFUNC.
        let isFunction: Bool
        /// `st_value`: for a defined symbol of a shared object, its address
        /// relative to the load base.
        var value: UInt64 = 0
    }

    /// A `PT_LOAD` program header: what the loader maps, and how.
    struct Segment: Sendable, Hashable {
        let virtualAddress: UInt64
        let memorySize: UInt64
        /// `PF_X`: mapped executable.
        let isExecutable: Bool

        func contains(_ address: UInt64) -> Bool {
            address >= virtualAddress && address - virtualAddress < memorySize
        }
    }

    struct Note: Sendable, Hashable {
        /// Name of the SHT_NOTE section the note was found in.
        let section: String
        /// Note owner, e.g. "GNU", without its trailing NUL.
        let name: String
        let type: UInt32
        let desc: [UInt8]
    }

    let fileSize: Int
    let machine: UInt16
    /// NUL-separated strings of `.comment`, empty strings dropped.
    let comment: [String]
    /// DT_NEEDED entries in order.
    package let needed: [String]
    /// DT_SONAME.
    let soname: String?
    /// DT_RUNPATH, or DT_RPATH when there is no DT_RUNPATH, split on ':'.
    let runpath: [String]
    /// From the SHT_DYNSYM table: index 0 and empty names skipped, only
    /// GLOBAL, WEAK and GNU_UNIQUE bindings (LOCAL entries are not exported).
    let symbols: ELFSymbolTable
    /// All notes of all SHT_NOTE sections, in section order.
    let notes: [Note]
    /// The `PT_LOAD` segments.
    var segments: [Segment] = []
    /// Each named section and its size in the file (0 for SHT_NOBITS), in
    /// file order. A list, not a dictionary: hashing the forty-odd names was
    /// a tenth of a parse, for the one size the checks read.
    var sections: [(name: String, size: UInt64)] = []

    /// `e_machine` of the running process: plugins must match it to load.
    static var hostMachine: UInt16 {
        #if arch(x86_64)
        return 62  // EM_X86_64
        #elseif arch(arm64)
        return 183  // EM_AARCH64
        #else
        return 0  // EM_NONE: no plugin will match on an unknown host
        #endif
    }

    /// The size of the first section called `name`.
    func sectionSize(_ name: String) -> UInt64? {
        sections.first { $0.name == name }?.size
    }

    func defines(_ symbol: String) -> Bool {
        symbols.definition(of: symbol) != nil
    }

    /// The defined dynamic symbol called `name`.
    func definition(of name: String) -> Symbol? {
        symbols.definition(of: name)
    }

    /// Whether `address` lies in a segment mapped executable.
    func isExecutable(_ address: UInt64) -> Bool {
        segments.contains { $0.isExecutable && $0.contains(address) }
    }

    /// The toolchain line of `.comment`: first entry that starts with
    /// "clang version" or contains "swiftlang" (nil if none).
    var toolchainComment: String? {
        comment.first { $0.hasPrefix("clang version") || Self.text($0, contains: "swiftlang") }
    }

    /// Whether `text` holds `word`, compared on UTF-8 bytes: the generic
    /// searches (Foundation's, and the standard library's `firstRange`) cost
    /// 70,000 instructions for one comment line, twice per activation.
    static func text(_ text: String, contains word: String) -> Bool {
        let haystack = Array(text.utf8), needle = Array(word.utf8)
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

// MARK: - Reading a file

extension ELFImage {
    /// Maps `path` read-only and parses it. Nothing from the file is executed.
    ///
    /// For the host's own, trusted images only (the Swift runtime): if another
    /// process truncates a mapped file, touching the vanished pages raises
    /// SIGBUS. Plugin files are read with ``PluginFile/readBytes(_:reportedAs:)`` instead.
    static func readMapped(
        path: String, expectedMachine: UInt16 = ELFImage.hostMachine, symbols: Bool = true
    ) throws(ReadError) -> ELFImage {
        // O_NONBLOCK: opening a fifo for reading would otherwise block until a
        // writer appears; it has no effect on regular files.
        // O_NOCTTY: a terminal device must not become our controlling tty.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .cannotOpen(errno: errno) }
        defer { close(fd) }

        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotOpen(errno: errno) }
        // Only regular files: mmap of a directory fails, and of a device can
        // have side effects or an unbounded size.
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile }
        guard info.st_size > 0 else { throw .empty }
        guard let size = Int(exactly: info.st_size) else { throw .malformed("file size") }

        // Map instead of read: we only touch the headers and a few sections,
        // not the (possibly large) code and debug info.
        guard let map = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else {
            throw .cannotOpen(errno: errno)
        }
        defer { munmap(map, size) }
        // parse copies everything out into Swift values, so nothing refers to
        // the mapping after munmap.
        return try parse(UnsafeRawBufferPointer(start: map, count: size), expectedMachine: expectedMachine, symbols: symbols)
    }
}

// MARK: - Parsing bytes

extension ELFImage {
    // ELF constants used below (from <elf.h>; spelled out so no header is needed).
    static let elfHeaderSize = 64
    static let sectionHeaderSize = 64
    static let symbolSize = 24
    static let dynamicEntrySize = 16
    static let etDyn: UInt16 = 3
    static let shtStrtab: UInt32 = 3
    static let shtDynamic: UInt32 = 6
    static let shtNote: UInt32 = 7
    static let shtNobits: UInt32 = 8
    static let shtDynsym: UInt32 = 11
    static let shnXindex: UInt16 = 0xffff

    /// Parses an in-memory image. `bytes` is only read during the call.
    /// `symbols: false` skips the dynamic symbol table (most of the work for
    /// a large library such as the Swift runtime).
    package static func parse(
        _ bytes: UnsafeRawBufferPointer, expectedMachine: UInt16 = ELFImage.hostMachine, symbols: Bool = true
    ) throws(ReadError) -> ELFImage {
        let file = ELFBytes(raw: bytes)
        guard bytes.count > 0 else { throw .empty }
        guard bytes.count >= 4, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46 else {
            throw .notELF
        }
        guard bytes.count >= 16 else { throw .truncated("ELF identification") }
        guard bytes[4] == 2 else { throw .unsupportedClass(bytes[4]) }  // ELFCLASS64
        guard bytes[5] == 1 else { throw .unsupportedByteOrder(bytes[5]) }  // ELFDATA2LSB
        guard bytes.count >= elfHeaderSize else { throw .truncated("ELF header") }

        let type = try file.u16(16)
        let machine = try file.u16(18)
        // Machine first: a foreign-architecture plugin is the more useful diagnosis.
        guard machine == expectedMachine else { throw .wrongMachine(found: machine, expected: expectedMachine) }
        guard type == etDyn else { throw .notSharedObject(type: type) }
        let ehsize = try file.u16(52)
        guard Int(ehsize) >= elfHeaderSize else { throw .malformed("e_ehsize \(ehsize) smaller than ELF64 header") }

        let sections = try readSectionHeaders(file)

        // Section contents are validated lazily, only for the sections we use:
        // a bogus offset in some debug section must not reject a usable plugin.
        var symbolTable = ELFSymbolTable.empty
        if symbols, let dynsym = sections.first(where: { $0.type == shtDynsym }) {
            symbolTable = try readSymbols(file, dynsym, sections)
        }

        var needed: [String] = []
        var soname: String?
        var runpath: String?
        var rpath: String?
        if let dynamic = sections.first(where: { $0.type == shtDynamic }) {
            let data = try file.contents(of: dynamic)
            let strtab = try linkedStringTable(file, dynamic, sections)
            try checkEntrySize(dynamic, dynamicEntrySize)
            var offset = data.lowerBound
            // Stop at DT_NULL; sections are often padded with extra DT_NULLs.
            while data.upperBound - offset >= dynamicEntrySize {
                let tag = try file.u64(offset)
                let value = try file.u64(offset + 8)
                offset += dynamicEntrySize
                switch tag {
                case 0: break  // DT_NULL
                case 1: needed.append(try file.string(in: strtab, at: value, table: ".dynstr"))  // DT_NEEDED
                case 14: soname = try file.string(in: strtab, at: value, table: ".dynstr")  // DT_SONAME
                case 15: rpath = try file.string(in: strtab, at: value, table: ".dynstr")  // DT_RPATH
                case 29: runpath = try file.string(in: strtab, at: value, table: ".dynstr")  // DT_RUNPATH
                default: continue
                }
                if tag == 0 { break }
            }
        }
        // The dynamic loader ignores DT_RPATH when DT_RUNPATH is present.
        // Empty entries kept: the dynamic loader reads one as the working directory.
        let searchPath = (runpath ?? rpath).map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []

        var notes: [Note] = []
        for section in sections where section.type == shtNote {
            try readNotes(file, section, into: &notes)
        }

        var comment: [String] = []
        if let section = sections.first(where: { $0.name == ".comment" && $0.type != shtNobits }) {
            let data = try file.contents(of: section)
            comment = file.raw[data].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }

        let sizes = sections.filter { !$0.name.isEmpty }.map { ($0.name, $0.type == shtNobits ? 0 : $0.size) }
        return ELFImage(
            fileSize: bytes.count, machine: machine, comment: comment, needed: needed, soname: soname,
            runpath: searchPath, symbols: symbolTable, notes: notes,
            segments: try readLoadSegments(file), sections: sizes)
    }
}
