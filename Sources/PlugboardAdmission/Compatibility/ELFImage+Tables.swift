#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The tables of an ELF file the parse reads: program headers, section
/// headers, symbols, notes; each read through ``ELFBytes``.
extension ELFImage {
    // MARK: Program headers

    static let programHeaderSize = 56

    /// The `PT_LOAD` entries of the program header table.
    static func readLoadSegments(_ file: ELFBytes) throws(ReadError) -> [Segment] {
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

    struct Section {
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

    static func readSectionHeader(_ file: ELFBytes, at base: Int, index: Int) throws(ReadError) -> Section {
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

    static func readSectionHeaders(_ file: ELFBytes) throws(ReadError) -> [Section] {
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

    static func checkEntrySize(_ section: Section, _ expected: Int) throws(ReadError) {
        // 0 is tolerated (some tools leave it unset); anything else must match
        // the structure we are about to read.
        guard section.entsize == 0 || section.entsize == UInt64(expected) else {
            throw .malformed("\(section.label) sh_entsize \(section.entsize), expected \(expected)")
        }
    }

    /// File range of the string table a section's sh_link points to.
    static func linkedStringTable(
        _ file: ELFBytes, _ section: Section, _ sections: [Section]
    ) throws(ReadError) -> Range<Int> {
        guard UInt64(section.link) < UInt64(sections.count), section.link != 0 else {
            throw .malformed("\(section.label) sh_link out of range")
        }
        let strtab = sections[Int(section.link)]
        guard strtab.type == shtStrtab else { throw .malformed("\(section.label) sh_link is not a string table") }
        return try file.contents(of: strtab)
    }

    // MARK: Symbols

    static func readSymbols(
        _ file: ELFBytes, _ dynsym: Section, _ sections: [Section]
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

    static func readNotes(_ file: ELFBytes, _ section: Section, into notes: inout [Note]) throws(ReadError) {
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
    static func aligned(_ position: Int, _ align: Int, from origin: Int) -> Int {
        origin + ((position - origin + align - 1) & ~(align - 1))
    }
}

// MARK: - Bounds-checked byte access

/// Read-only view of the file with every access checked, so a lying header
/// becomes a `ReadError` instead of an out-of-bounds read.
package struct ELFBytes {
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
    func contents(of section: ELFImage.Section) throws(ELFImage.ReadError) -> Range<Int> {
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
