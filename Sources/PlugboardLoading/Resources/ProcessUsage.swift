import FoundationEssentials
import PlugboardCore
#if canImport(Glibc)
import Glibc
#endif

/// What `/proc` tells of one process, for a child no cgroup counts
/// (proc(5): `status` and `stat`).
package enum ProcessUsage {
    /// Its resident and peak memory, threads and CPU time now; nil once it is gone.
    package static func of(_ pid: pid_t) -> ResourceUsage? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var usage = ResourceUsage(boundBy: "none")
        for line in status.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, let value = Int(words[1]) else { continue }
            switch words[0] {
            case "VmRSS:": usage.memory = value * 1024
            case "VmHWM:": usage.peakMemory = value * 1024
            case "Threads:": usage.tasks = value
            default: continue
            }
        }
        // utime and stime, fields 14 and 15, in clock ticks.
        if let stat = fields(of: pid), stat.count > 14, let user = Double(stat[13]), let system = Double(stat[14]) {
            usage.cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        return usage
    }

    /// Its threads now (field 20 of `stat`); nil once it is gone.
    package static func threads(of pid: pid_t) -> Int? {
        guard let stat = fields(of: pid), stat.count > 19 else { return nil }
        return Int(stat[19])
    }

    /// The fields of `/proc/PID/stat`, the command name (which may hold
    /// spaces) as one.
    static func fields(of pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        return [text[..<open].dropLast(), text[open...close]] + text[text.index(after: close)...].split(separator: " ")
    }
}
