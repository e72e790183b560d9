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
    let needed: [String]
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
    private static let elfHeaderSize = 64
    private static let sectionHeaderSize = 64
    private static let symbolSize = 24
    private static let dynamicEntrySize = 16
    private static let etDyn: UInt16 = 3
    private static let shtStrtab: UInt32 = 3
    private static let shtDynamic: UInt32 = 6
    private static let shtNote: UInt32 = 7
    fileprivate static let shtNobits: UInt32 = 8
    private static let shtDynsym: UInt32 = 11
    private static let shnXindex: UInt16 = 0xffff

    /// Parses an in-memory image. `bytes` is only read during the call.
    /// `symbols: false` skips the dynamic symbol table (most of the work for
    /// a large library such as the Swift runtime).
    package static func parse(
        _ bytes: UnsafeRawBufferPointer, expectedMachine: UInt16 = ELFImage.hostMachine, symbols: Bool = true
    ) throws(ReadError) -> ELFImage {
        let file = Bytes(raw: bytes)
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

    // MARK: Program headers

    private static let programHeaderSize = 56

    /// The `PT_LOAD` entries of the program header table.
    private static func readLoadSegments(_ file: Bytes) throws(ReadError) -> [Segment] {
        let phoff = try file.u64(32)
        let phentsize = try file.u16(54)
        let phnum = UInt64(try file.u16(56))
        guard phoff != 0, phnum > 0 else { throw .malformed("no program header table: the loader cannot map it") }
        guard Int(phentsize) == programHeaderSize else {
            throw .malformed("e_phentsize \(phentsize), expected \(programHeaderSize)")
        }
        let table = try file.range(phoff, phnum * UInt64(programHeaderSize), "program header table")
        var segments: [Segment] = []
        for index in 0..<Int(phnum) {
            let base = table.lowerBound + index * programHeaderSize
            guard try file.u32(base) == 1 else { continue }  // PT_LOAD
            let flags = try file.u32(base + 4)
            segments.append(Segment(
                virtualAddress: try file.u64(base + 16), memorySize: try file.u64(base + 40),
                isExecutable: flags & 1 != 0))  // PF_X
        }
        return segments
    }

    // MARK: Section headers

    fileprivate struct Section {
        var name: String
        let nameOffset: UInt32
        let type: UInt32
        let offset: UInt64
        let size: UInt64
        let link: UInt32
        let addralign: UInt64
        let entsize: UInt64
        /// For messages: the name, or the index when the name is unavailable.
        var label: String
    }

    private static func readSectionHeader(_ file: Bytes, at base: Int, index: Int) throws(ReadError) -> Section {
        Section(
            name: "",
            nameOffset: try file.u32(base),
            type: try file.u32(base + 4),
            offset: try file.u64(base + 24),
            size: try file.u64(base + 32),
            link: try file.u32(base + 40),
            addralign: try file.u64(base + 48),
            entsize: try file.u64(base + 56),
            label: "section \(index)")
    }

    private static func readSectionHeaders(_ file: Bytes) throws(ReadError) -> [Section] {
        let shoff = try file.u64(40)
        let shentsize = try file.u16(58)
        var shnum = UInt64(try file.u16(60))
        var shstrndx = UInt64(try file.u16(62))
        // Without section headers (e.g. sstrip'ed files) there is nothing to read.
        guard shoff != 0 else { throw .malformed("no section header table") }
        guard Int(shentsize) == sectionHeaderSize else {
            throw .malformed("e_shentsize \(shentsize), expected \(sectionHeaderSize)")
        }
        // Extended numbering: with >= 0xff00 sections the real count lives in
        // section 0's sh_size and the name table index in its sh_link.
        if shnum == 0 || shstrndx == UInt64(shnXindex) {
            let first = try file.range(shoff, UInt64(sectionHeaderSize), "section header table")
            let zero = try readSectionHeader(file, at: first.lowerBound, index: 0)
            if shnum == 0 { shnum = zero.size }
            if shstrndx == UInt64(shnXindex) { shstrndx = UInt64(zero.link) }
        }
        guard shnum > 0 else { throw .malformed("no sections") }
        let (tableSize, overflow) = shnum.multipliedReportingOverflow(by: UInt64(sectionHeaderSize))
        guard !overflow else { throw .truncated("section header table") }
        let table = try file.range(shoff, tableSize, "section header table")

        // shnum * 64 fits in the file, so it is a sane Int from here on.
        var sections: [Section] = []
        sections.reserveCapacity(Int(shnum))
        for index in 0..<Int(shnum) {
            sections.append(try readSectionHeader(file, at: table.lowerBound + index * sectionHeaderSize, index: index))
        }

        // SHN_UNDEF means the file has no section names; everything stays "".
        if shstrndx != 0 {
            guard shstrndx < shnum else { throw .malformed("e_shstrndx out of range") }
            let names = sections[Int(shstrndx)]
            guard names.type != shtNobits else { throw .malformed("section name table has no file data") }
            let strings = try file.range(names.offset, names.size, "section name string table")
            for index in sections.indices {
                let name = try file.string(in: strings, at: UInt64(sections[index].nameOffset), table: "section names")
                sections[index].name = name
                if !name.isEmpty { sections[index].label = name }
            }
        }
        return sections
    }

    private static func checkEntrySize(_ section: Section, _ expected: Int) throws(ReadError) {
        // 0 is tolerated (some tools leave it unset); anything else must match
        // the structure we are about to read.
        guard section.entsize == 0 || section.entsize == UInt64(expected) else {
            throw .malformed("\(section.label) sh_entsize \(section.entsize), expected \(expected)")
        }
    }

    /// File range of the string table a section's sh_link points to.
    private static func linkedStringTable(
        _ file: Bytes, _ section: Section, _ sections: [Section]
    ) throws(ReadError) -> Range<Int> {
        guard UInt64(section.link) < UInt64(sections.count), section.link != 0 else {
            throw .malformed("\(section.label) sh_link out of range")
        }
        let strtab = sections[Int(section.link)]
        guard strtab.type == shtStrtab else { throw .malformed("\(section.label) sh_link is not a string table") }
        return try file.contents(of: strtab)
    }

    // MARK: Symbols

    private static func readSymbols(
        _ file: Bytes, _ dynsym: Section, _ sections: [Section]
    ) throws(ReadError) -> ELFSymbolTable {
        try checkEntrySize(dynsym, symbolSize)
        let data = try file.contents(of: dynsym)
        let strtab = try linkedStringTable(file, dynsym, sections)
        let count = data.count / symbolSize  // a partial trailing entry is ignored
        return try ELFSymbolTable.read(
            symbols: UnsafeRawBufferPointer(rebasing: file.raw[data]), count: count,
            strings: UnsafeRawBufferPointer(rebasing: file.raw[strtab]), tableLabel: "\(dynsym.label) strings")
    }

    // MARK: Notes

    private static func readNotes(_ file: Bytes, _ section: Section, into notes: inout [Note]) throws(ReadError) {
        let data = try file.contents(of: section)
        // The spec says 4-byte alignment for ELF64 too, but 8-aligned note
        // sections (.note.gnu.property) pad to 8; readelf decides the same way.
        let align = section.addralign == 8 ? 8 : 4
        var offset = data.lowerBound
        while offset < data.upperBound {
            guard data.upperBound - offset >= 12 else { throw .malformed("note header in \(section.label)") }
            let namesz = Int(try file.u32(offset))
            let descsz = Int(try file.u32(offset + 4))
            let type = try file.u32(offset + 8)
            // namesz/descsz are at most 2^32 - 1, so these sums cannot overflow Int.
            // Padding aligns positions (relative to the section start), not
            // sizes: with 8-byte alignment the 12-byte header + "GNU\0" puts
            // the descriptor at 16, not at 12 + 8.
            let nameStart = offset + 12
            let descStart = aligned(nameStart + namesz, align, from: data.lowerBound)
            let next = aligned(descStart + descsz, align, from: data.lowerBound)
            guard nameStart + namesz <= data.upperBound, descStart + descsz <= data.upperBound else {
                throw .malformed("note in \(section.label) runs past the section")
            }
            // The name includes its NUL terminator; drop it (and any padding NULs).
            var nameBytes = file.raw[nameStart..<(nameStart + namesz)]
            while let last = nameBytes.last, last == 0 { nameBytes = nameBytes.dropLast() }
            notes.append(
                Note(
                    section: section.label, name: String(decoding: nameBytes, as: UTF8.self), type: type,
                    desc: Array(file.raw[descStart..<(descStart + descsz)])))
            offset = min(next, data.upperBound)
        }
    }

    /// Rounds `position` up to a multiple of `align` counted from `origin`.
    private static func aligned(_ position: Int, _ align: Int, from origin: Int) -> Int {
        origin + ((position - origin + align - 1) & ~(align - 1))
    }
}

// MARK: - Bounds-checked byte access

/// Read-only view of the file with every access checked, so a lying header
/// becomes a `ReadError` instead of an out-of-bounds read.
private struct Bytes {
    let raw: UnsafeRawBufferPointer

    /// Validates that [offset, offset + size) lies inside the file.
    func range(_ offset: UInt64, _ size: UInt64, _ what: @autoclosure () -> String) throws(ELFImage.ReadError)
        -> Range<Int>
    {
        let (end, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, end <= UInt64(raw.count) else { throw .truncated(what()) }
        return Int(offset)..<Int(end)
    }

    /// The bytes of a section; SHT_NOBITS sections (.bss) have none in the file.
    fileprivate func contents(of section: ELFImage.Section) throws(ELFImage.ReadError) -> Range<Int> {
        guard section.type != ELFImage.shtNobits else { throw .malformed("\(section.label) has no file data") }
        return try range(section.offset, section.size, section.label)
    }

    // Field reads. Callers stay inside ranges validated above; the check here
    // is the second line of defence so a slip can never read out of bounds.
    private func check(_ offset: Int, _ width: Int) throws(ELFImage.ReadError) {
        guard offset >= 0, offset <= raw.count - width else { throw .truncated("field at offset \(offset)") }
    }
    func u8(_ offset: Int) throws(ELFImage.ReadError) -> UInt8 {
        try check(offset, 1)
        return raw[offset]
    }
    func u16(_ offset: Int) throws(ELFImage.ReadError) -> UInt16 {
        try check(offset, 2)
        return UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    func u32(_ offset: Int) throws(ELFImage.ReadError) -> UInt32 {
        try check(offset, 4)
        return UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    func u64(_ offset: Int) throws(ELFImage.ReadError) -> UInt64 {
        try check(offset, 8)
        return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// NUL-terminated string at `offset` inside the string table `table`,
    /// bounded by the table's end (an unterminated string ends there).
    /// Invalid UTF-8 is decoded lossily: names are for display and matching.
    func string(in table: Range<Int>, at offset: UInt64, table name: @autoclosure () -> String)
        throws(ELFImage.ReadError) -> String
    {
        guard offset < UInt64(table.count) else { throw .malformed("string offset \(offset) out of range in \(name())") }
        let start = table.lowerBound + Int(offset)
        let tail = UnsafeRawBufferPointer(rebasing: raw[start..<table.upperBound])
        // memchr is much faster than a Swift byte loop over large .dynstr tables.
        let length: Int
        if let base = tail.baseAddress, let nul = memchr(base, 0, tail.count) {
            length = base.distance(to: UnsafeRawPointer(nul))
        } else {
            length = tail.count
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: tail[0..<length]), as: UTF8.self)
    }
}
