#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A plugin file's exported and imported dynamic symbols, with their names
/// kept as the file's bytes until one is asked for.
///
/// A plugin has hundreds of dynamic symbols and the checks look at a few of
/// them (the entry point, the SDK's protocol, the SDK symbols it imports):
/// a `String` per symbol was a fifth of an activation's instructions, for
/// the parse and again to free them.
struct ELFSymbolTable: Sendable {
    /// One symbol as the table holds it: where its name starts in
    /// `strings`, and what the checks need of the rest.
    private struct Entry: Sendable {
        let nameOffset: UInt32
        let isDefined: Bool
        let isWeak: Bool
        let isFunction: Bool
        let value: UInt64
    }

    private let entries: [Entry]
    /// A copy of the symbols' string table (`.dynstr`).
    private let strings: [UInt8]

    static let empty = ELFSymbolTable(entries: [], strings: [])

    private init(entries: [Entry], strings: [UInt8]) {
        self.entries = entries
        self.strings = strings
    }

    /// Reads `count` 24-byte ELF64 symbols at `symbols` (index 0, the
    /// reserved null symbol, skipped), naming them from `strings`. Only
    /// GLOBAL, WEAK and GNU_UNIQUE bindings with a non-empty name are kept:
    /// LOCAL entries are not exported. Every name offset is checked here, so
    /// a name read later is always inside the copied table.
    static func read(
        symbols: UnsafeRawBufferPointer, count: Int, strings: UnsafeRawBufferPointer, tableLabel: @autoclosure () -> String
    ) throws(ELFImage.ReadError) -> ELFSymbolTable {
        precondition(symbols.count >= count * 24, "the caller bounds the symbol table")
        var entries: [Entry] = []
        entries.reserveCapacity(max(0, count - 1))
        var index = 1
        while index < count {
            let base = index * 24
            index += 1
            let nameOffset = UInt32(littleEndian: symbols.loadUnaligned(fromByteOffset: base, as: UInt32.self))
            let info = symbols[base + 4]
            let shndx = UInt16(littleEndian: symbols.loadUnaligned(fromByteOffset: base + 6, as: UInt16.self))
            let value = UInt64(littleEndian: symbols.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self))
            let binding = info >> 4
            // STB_GLOBAL 1, STB_WEAK 2, STB_GNU_UNIQUE 10: visible to other objects.
            guard binding == 1 || binding == 2 || binding == 10, nameOffset != 0 else { continue }
            guard Int(nameOffset) < strings.count else {
                throw .malformed("string offset \(nameOffset) out of range in \(tableLabel())")
            }
            guard strings[Int(nameOffset)] != 0 else { continue }  // an empty name
            let kind = info & 0xf
            entries.append(Entry(
                nameOffset: nameOffset, isDefined: shndx != 0, isWeak: binding == 2,
                isFunction: kind == 2 || kind == 10, value: value))  // STT_FUNC, STT_GNU_IFUNC
        }
        return ELFSymbolTable(entries: entries, strings: Array(strings))
    }

    /// The defined symbol called `name`.
    func definition(of name: String) -> ELFImage.Symbol? {
        let wanted = Array(name.utf8)
        return strings.withUnsafeBufferPointer { table in
            entries.first { $0.isDefined && Self.name(at: Int($0.nameOffset), in: table, is: wanted, prefixOnly: false) }
        }.map(symbol)
    }

    /// The symbols the file expects another image to provide whose names
    /// start with one of `prefixes`, in table order.
    func undefined(withPrefixes prefixes: [String]) -> [ELFImage.Symbol] {
        let wanted = prefixes.map { Array($0.utf8) }
        var found: [Entry] = []
        strings.withUnsafeBufferPointer { table in
            for entry in entries where !entry.isDefined {
                for prefix in wanted where Self.name(at: Int(entry.nameOffset), in: table, is: prefix, prefixOnly: true) {
                    found.append(entry)
                    break
                }
            }
        }
        return found.map(symbol)
    }

    /// Whether the name at `start` is `bytes` (or starts with them),
    /// compared in place.
    private static func name(
        at start: Int, in table: UnsafeBufferPointer<UInt8>, is bytes: [UInt8], prefixOnly: Bool
    ) -> Bool {
        let available = table.count - start
        guard available >= bytes.count else { return false }
        for (offset, byte) in bytes.enumerated() where table[start + offset] != byte { return false }
        // The whole name: it ends where the wanted bytes do.
        return prefixOnly || available == bytes.count || table[start + bytes.count] == 0
    }

    /// The bytes of an entry's name, up to its NUL or the table's end.
    private func nameBytes(of entry: Entry) -> ArraySlice<UInt8> {
        let start = Int(entry.nameOffset)
        let end = strings.withUnsafeBufferPointer { table in
            // memchr is much faster than a Swift byte loop.
            let tail = UnsafeRawPointer(table.baseAddress! + start)
            return memchr(tail, 0, table.count - start).map { tail.distance(to: UnsafeRawPointer($0)) + start } ?? table.count
        }
        return strings[start..<end]
    }

    /// Invalid UTF-8 is decoded lossily: names are for display and matching.
    private func symbol(_ entry: Entry) -> ELFImage.Symbol {
        ELFImage.Symbol(
            name: String(decoding: nameBytes(of: entry), as: UTF8.self), isDefined: entry.isDefined,
            isWeak: entry.isWeak, isFunction: entry.isFunction, value: entry.value)
    }
}
