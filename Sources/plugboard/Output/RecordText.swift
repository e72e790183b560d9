import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardHost

/// Plugin records for people.
enum RecordText {
    static func statusStyle(_ status: PluginStatus) -> Terminal.Style {
        switch status {
        case .active: .green
        case .available: .cyan
        case .rejected, .quarantined: .red
        case .failed: .yellow
        case .disabled: .dim
        }
    }

    static func provides(_ record: PluginRecord) -> String {
        record.provides.isEmpty ? "-" : record.provides.map { "\($0.id) \($0.version.major).\($0.version.minor)" }.joined(separator: ", ")
    }

    static func list(
        _ records: [PluginRecord], directory: String, interfaceLibraries: [String] = [], taint: [TaintEntry] = [], signedLock: SignedLock? = nil
    ) -> String {
        // One pass over the records (a row per installed plugin): a filter per status copied each record seven times.
        var perStatus: [PluginStatus: Int] = [:]
        var active = Set<String>()
        var hasNotes = false
        for index in records.indices {
            let status = records[index].status
            perStatus[status, default: 0] += 1
            if status == .active, let id = records[index].id { active.insert(id) }
            if records[index].error != nil || records[index].warnings.count > records[index].undeclared.count { hasNotes = true }
        }
        let counts = PluginStatus.allCases.compactMap { status in perStatus[status].map { "\($0) \(status.rawValue)" } }
        var out = Terminal.style("Plugins in \(Terminal.safe(directory))", .bold)
            + " (\(records.count) file\(records.count == 1 ? "" : "s")\(counts.isEmpty ? "" : ": " + counts.joined(separator: ", ")))\n"
        if let signed = signedLock {
            out += "Signed set: sequence \(signed.sequence), channel \(Terminal.safe(signed.channel)), key \(signed.keyID), "
                + "expires \(UTCTimestamp.string(from: signed.expires))\n"
        }
        for entry in taint {
            out += Terminal.style("Tainted (\(entry.code)):", .yellow) + " \(Terminal.safe(entry.reason))\n"
        }
        if !interfaceLibraries.isEmpty {
            out += "Interface libraries (for plugins of a host's own extension points): "
                + interfaceLibraries.map { Terminal.safe(fileName($0)) }.joined(separator: ", ") + "\n"
        }
        guard !records.isEmpty else { return out + "  no *.so files found" }
        var table = Table(header: ["STATUS", "ID", "VERSION", "PROVIDES", "RUNS", "DEPENDS", "FILE"])
        table.rows.reserveCapacity(records.count)
        for record in records {
            table.rows.append([
                .init(text: record.status.rawValue, style: statusStyle(record.status)),
                .init(text: record.id ?? "-"),
                .init(text: record.version?.description ?? "-"),
                .init(text: provides(record)),
                .init(text: isolation(record)),
                .init(text: dependencies(record, active: active)),
                .init(text: fileName(record.path)),
            ])
        }
        out += table.render()
        if hasNotes {
            out += "\n\n" + Terminal.style("Problems", .bold)
            for record in records where record.error != nil || record.warnings.count > record.undeclared.count {
                if let error = record.error {
                    out += "\n  \(Terminal.safe(fileName(record.path))): " + Terminal.style("[\(Terminal.safe(error.code.rawValue))]", statusStyle(record.status))
                        + " \(Terminal.safe(error.reason))"
                }
                let undeclared = Set(record.provides.filter { record.undeclared.contains($0.id) }.map(PluginRecord.undeclaredWarning))
                for warning in record.warnings where !undeclared.contains(warning) {
                    out += "\n  \(Terminal.safe(fileName(record.path))): " + Terminal.style("[warning]", .yellow) + " \(Terminal.safe(warning))"
                }
            }
        }
        return out + undeclaredNote(records)
    }

    /// One line for the interfaces plugins provide that the tool does not
    /// declare (a host's own extension points), instead of a warning per plugin.
    static func undeclaredNote(_ records: [PluginRecord]) -> String {
        var plugins: [String: Int] = [:]
        for record in records { for interface in record.undeclared { plugins[interface, default: 0] += 1 } }
        guard !plugins.isEmpty else { return "" }
        let listed = plugins.sorted { $0.key < $1.key }.map { "\(Terminal.safe($0.key)) (\($0.value) plugin\($0.value == 1 ? "" : "s"))" }
        return "\n\nInterfaces plugboard does not declare (a host's own points; that host checks their versions): "
            + listed.joined(separator: ", ")
    }

    /// What a plugin waits for (the required plugins not active yet, which
    /// its activation starts first), what it runs on, or why it stopped.
    static func dependencies(_ record: PluginRecord, active: Set<String>) -> String {
        if let code = record.error?.code.rawValue, code.hasPrefix("dependency-") { return "\(record.status.rawValue): \(code)" }
        let required = record.requires.filter { !$0.optional }.map(\.id)
        guard !required.isEmpty, record.status == .active || record.status == .available else { return "-" }
        let waiting = required.filter { !active.contains($0) }
        // Ids are reverse-DNS ASCII (checked when the descriptor is read): nothing to escape.
        if record.status == .available, !waiting.isEmpty { return "waits for " + waiting.joined(separator: ", ") }
        return "on " + required.joined(separator: ", ")
    }

    /// `in-process`, or `isolated` with the child's state and pid.
    static func isolation(_ record: PluginRecord) -> String {
        guard let isolation = record.isolation else { return "-" }
        guard isolation.mode == "isolated" else { return isolation.mode }
        let pid = isolation.pid.map { " pid \($0)" } ?? ""
        let restarts = isolation.restarts > 0 ? ", \(isolation.restarts) restart\(isolation.restarts == 1 ? "" : "s")" : ""
        return "isolated (\(isolation.state)\(pid)\(restarts))"
    }

    /// Its children's bounds, and what holds them here.
    static func bounds(_ usage: ResourceUsage) -> String {
        let set = [usage.memoryLimit.map { "memory \($0 >> 20) MiB" }, usage.tasksLimit.map { "tasks \($0)" },
                   usage.cpuCoresLimit.map { "CPU \($0) cores" }].compactMap { $0 }
        return "\(set.isEmpty ? "none" : set.joined(separator: ", ")) (\(usage.boundBy))"
    }

    static func detail(_ record: PluginRecord, host: PluginHost) -> String {
        var rows: [(String, String)] = [
            ("file", record.path),
        ]
        if let resolved = record.resolvedPath, resolved != record.path { rows.append(("resolves to", resolved)) }
        rows.append(("status", Terminal.style(record.status.rawValue, statusStyle(record.status))))
        if let error = record.error {
            rows.append(("code", error.code.rawValue))
            rows.append(("reason", error.reason))
        }
        for warning in record.warnings { rows.append(("warning", warning)) }
        if let id = record.id {
            rows.append(("id", id))
            rows.append(("version", record.version?.description ?? "-"))
            rows.append(("provides", provides(record)))
            rows.append(("services", record.services.isEmpty ? "-" : record.services.joined(separator: ", ")))
            rows.append(("SDK (descriptor)", "\(record.sdkVersion ?? "?") (ABI \(record.sdkABI?.description ?? "?"))"))
            rows.append(("toolchain", record.toolchain ?? "-"))
            rows.append(("activation", (["first lookup of a provided interface"] + record.activation).joined(separator: ", ")))
            if record.isolation != nil { rows.append(("runs", isolation(record))) }
            if let resources = record.isolation?.resources { rows.append(("bounds", bounds(resources))) }
            if !record.requires.isEmpty {
                rows.append(("requires", record.requires.map { "\($0.id) \($0.range)\($0.optional ? " (optional)" : "")" }.joined(separator: ", ")))
            }
            rows.append(("sandbox needs", record.needs.isEmpty ? "none beyond the defaults" : record.needs.joined(separator: ", ")))
        }
        if let quarantine = record.quarantine {
            rows.append(("quarantine", "\(quarantine.code), phase \(quarantine.phase.rawValue), \(quarantine.date)"))
            for line in quarantine.stderrTail { rows.append(("  stderr", line)) }
        }
        if let file = record.file {
            rows.append(("size", "\(file.size) bytes"))
            rows.append(("architecture", file.architecture))
            rows.append(("SDK ABI (file)", file.sdkABI?.description ?? "-"))
            rows.append(("toolchain (file)", file.toolchain ?? "-"))
            rows.append(("entry point", file.hasEntryPoint ? "plugboard_entry" : "missing"))
            rows.append(("needs", file.needed.joined(separator: ", ")))
            rows.append(("runpath", file.runpath.joined(separator: ":")))
        }
        rows.append(("host SDK", "\(host.baseline.sdkVersion) (ABI \(host.baseline.sdkABI))"))
        rows.append(("host toolchain", host.baseline.toolchain))
        let width = rows.map(\.0.count).max() ?? 0
        // Every value may come from the plugin file or its code: escaped and
        // capped; only the status (ours) is styled after.
        return rows.map { label, value in
            let shown = label == "status" ? value : Terminal.safe(value)
            return "\(Terminal.style(label.padding(to: width), .bold))  \(shown)"
        }.joined(separator: "\n")
    }

    static func fileName(_ path: String) -> String {
        guard let slash = lastSlash(in: path) else { return path }
        let name = String(path[path.utf8.index(after: slash)...])
        return name.isEmpty ? path : name
    }
}
