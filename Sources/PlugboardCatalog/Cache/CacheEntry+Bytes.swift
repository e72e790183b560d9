import PlugboardCore
import PlugboardAdmission

/// A cache entry's bytes (format 7), in the cache's one encoding
/// (CacheFields.swift): fields in a fixed order, read with little parsing.
/// Every warm start reads one entry per plugin it lists; through `Codable`
/// (format 4) an entry cost about 57,000 instructions, most of it the
/// standard library's generic, boxed keyed containers.
///
/// ```
/// entry      := identity(5 × u64) hash(text?) kind(u8) body details
/// body       := kind 0 (plugin):      scanned
///               kind 1 (rejected):    code(text) reason(text)
///               kind 2 (quarantined): quarantine flag [scanned]
/// scanned    := id version [provided] services(texts) sdkABI sdkVersion toolchain activation(texts) requires needs(texts)
/// provided   := u32 count, count × (interface version)
/// requires   := texts? ("?" when optional, the id, a space, the range)
/// quarantine := phase ending signal(text?) exitStatus(int?) milliseconds(double?) stderrTail(texts)
///               date evidence(text?) interruptedStarts(int?) crashes(int?) window(int?) taint(texts?)
/// details    := flag [size(u64) architecture toolchain(text?) sdkABI(text?) needed(texts) runpath(texts) hasEntryPoint(flag)]
/// texts?     := flag [texts]
/// ```
///
/// Any change here needs a new `RegistryCache.format` (`CacheLayoutTests` pins it).
extension CacheEntry {
    private enum Kind: UInt8 {
        case plugin = 0, rejected, quarantined
    }

    package func bytes() throws -> [UInt8] {
        var out = EntryWriter()
        for field in [identity.device, identity.inode, UInt64(bitPattern: identity.size), UInt64(bitPattern: identity.modified), UInt64(bitPattern: identity.changed)] {
            out.append(field)
        }
        try out.append(optional: hash)
        switch result {
        case let .plugin(scanned):
            out.append(Kind.plugin.rawValue)
            try out.append(scanned)
        case let .rejected(code, reason):
            out.append(Kind.rejected.rawValue)
            try out.append(code)
            try out.append(reason)
        case let .quarantined(quarantine):
            out.append(Kind.quarantined.rawValue)
            try out.append(quarantine)
            out.append(flag: plugin != nil)
            if let plugin { try out.append(plugin) }
        }
        out.append(flag: details != nil)
        if let details { try out.append(details) }
        return out.bytes
    }

    /// The entry in `bytes`, which must hold exactly one.
    package init(bytes: UnsafeRawBufferPointer) throws(EntryReader.Damage) {
        var input = EntryReader(bytes)
        let identity = try FileIdentity(
            device: input.uint64(), inode: input.uint64(), size: Int64(bitPattern: input.uint64()),
            modified: Int64(bitPattern: input.uint64()), changed: Int64(bitPattern: input.uint64()))
        let hash = try input.optionalText()
        let result: Result
        var plugin: ScannedPlugin?
        switch Kind(rawValue: try input.byte()) {
        case .plugin?:
            result = .plugin(try input.scannedPlugin())
        case .rejected?:
            result = .rejected(code: try input.text(), reason: try input.text())
        case .quarantined?:
            result = .quarantined(try input.quarantine())
            if try input.flag() { plugin = try input.scannedPlugin() }
        case nil:
            throw EntryReader.Damage(description: "an unknown kind of entry")
        }
        let details = try input.flag() ? try input.fileDetails() : nil
        guard input.isAtEnd else { throw EntryReader.Damage(description: "bytes after the entry") }
        self.init(identity: identity, hash: hash, result: result, details: details, plugin: plugin)
    }
}

extension EntryWriter {
    mutating func append(_ plugin: ScannedPlugin) throws(EntryReader.Damage) {
        try append(plugin.id)
        try append(plugin.version)
        try append(length: plugin.provides.count)
        for provided in plugin.provides {
            try append(provided.interface)
            try append(provided.version)
        }
        try append(plugin.services)
        try append(plugin.sdkABI)
        try append(plugin.sdkVersion)
        try append(plugin.toolchain)
        try append(plugin.activation)
        try append(optional: plugin.requires?.map(ScannedPlugin.requirementText))
        try append(plugin.needs)
    }

    mutating func append(_ quarantine: Quarantine) throws(EntryReader.Damage) {
        try append(quarantine.phase.rawValue)
        try append(quarantine.ending.rawValue)
        try append(optional: quarantine.signal)
        append(optional: quarantine.exitStatus.map(Int.init))
        append(optional: quarantine.milliseconds)
        try append(quarantine.stderrTail)
        try append(quarantine.date)
        try append(optional: quarantine.evidence?.rawValue)
        append(optional: quarantine.interruptedStarts)
        append(optional: quarantine.crashes)
        append(optional: quarantine.window)
        try append(optional: quarantine.taint)
    }

    mutating func append(_ details: PluginRecord.FileDetails) throws(EntryReader.Damage) {
        append(UInt64(bitPattern: Int64(details.size)))
        try append(details.architecture)
        try append(optional: details.toolchain)
        try append(optional: details.sdkABI?.description)
        try append(details.needed)
        try append(details.runpath)
        append(flag: details.hasEntryPoint)
    }
}

extension EntryReader {
    mutating func scannedPlugin() throws(Damage) -> ScannedPlugin {
        let id = try text(), version = try text()
        let count = Int(try length())
        guard count <= room(for: 8) else { throw Damage(description: "\(count) interfaces cannot fit at byte \(position - 4)") }
        var provides: [ScannedPlugin.Provided] = []
        provides.reserveCapacity(count)
        for _ in 0..<count { provides.append(ScannedPlugin.Provided(interface: try text(), version: try text())) }
        let services = try texts()
        let sdkABI = try text(), sdkVersion = try text(), toolchain = try text()
        let activation = try texts()
        let requires = try optionalTexts()?.map { text throws(Damage) in
            guard let dependency = ScannedPlugin.requirement(text) else { throw Damage(description: "a requirement without a range") }
            return dependency
        }
        let needs = try texts()
        return ScannedPlugin(
            id: id, version: version, provides: provides, services: services, sdkABI: sdkABI, sdkVersion: sdkVersion,
            toolchain: toolchain, activation: activation, requires: requires, needs: needs)
    }

    mutating func quarantine() throws(Damage) -> Quarantine {
        let phase = try value(Quarantine.Phase.self, "quarantine phase")
        let ending = try value(Quarantine.Ending.self, "quarantine ending")
        let signal = try optionalText()
        let exitStatus = try optionalInt()
        guard exitStatus.map({ Int32(exactly: $0) != nil }) ?? true else { throw Damage(description: "an exit status out of range") }
        let milliseconds = try optionalDouble(), stderrTail = try texts(), date = try text()
        let evidence = try optionalText().map { text throws(Damage) in
            guard let evidence = Quarantine.Evidence(rawValue: text) else { throw Damage(description: "an unknown quarantine evidence \"\(text)\"") }
            return evidence
        }
        return Quarantine(
            phase: phase, ending: ending, signal: signal, exitStatus: exitStatus.map { Int32($0) }, milliseconds: milliseconds,
            stderrTail: stderrTail, date: date, evidence: evidence, interruptedStarts: try optionalInt(),
            crashes: try optionalInt(), window: try optionalInt(), taint: try optionalTexts())
    }

    mutating func fileDetails() throws(Damage) -> PluginRecord.FileDetails {
        let size = Int64(bitPattern: try uint64())
        guard size >= 0, let size = Int(exactly: size) else { throw Damage(description: "a file size out of range") }
        let architecture = try text(), toolchain = try optionalText()
        let sdkABI = try optionalText().map { text throws(Damage) in
            guard let version = ABIVersion(text) else { throw Damage(description: "an SDK ABI that is not MAJOR.MINOR: \"\(text)\"") }
            return version
        }
        return PluginRecord.FileDetails(
            size: size, architecture: architecture, toolchain: toolchain, sdkABI: sdkABI, needed: try texts(),
            runpath: try texts(), hasEntryPoint: try flag())
    }
}
