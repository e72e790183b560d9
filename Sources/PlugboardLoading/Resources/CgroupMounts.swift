import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where this machine mounts the cgroup controllers a child's bounds need,
/// and where this process sits in each (docs/sandbox.md, "Resources").
/// Read from `/proc/self/mountinfo` and `/proc/self/cgroup`.
package struct CgroupMounts: Sendable, Equatable {
    /// The controllers a child's bounds use: memory, tasks, CPU quota, CPU usage.
    package static let controllers = ["memory", "pids", "cpu", "cpuacct"]

    /// cgroup v1: per controller, the folder of this process's own cgroup
    /// (`/sys/fs/cgroup/memory/<its path>`).
    package var v1: [String: String] = [:]
    /// cgroup v2 (the unified hierarchy): this process's own cgroup folder,
    /// and the controllers it offers its children (`cgroup.controllers`).
    package var v2: (folder: String, controllers: Set<String>)?

    package static func == (one: CgroupMounts, other: CgroupMounts) -> Bool {
        one.v1 == other.v1 && one.v2?.folder == other.v2?.folder && one.v2?.controllers == other.v2?.controllers
    }

    /// This process's mounts, or none where `/proc` cannot be read.
    package static func current() -> CgroupMounts {
        let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        let membership = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        return parse(mountinfo: mountinfo, membership: membership)
    }

    /// The mounts in `mountinfo` (proc(5)), joined with the paths in
    /// `membership` (cgroups(7): `N:controllers:path`, `0::path` for v2).
    package static func parse(mountinfo: String, membership: String) -> CgroupMounts {
        var paths: [String: String] = [:]
        var unifiedPath: String?
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                unifiedPath = String(fields[2])
            } else {
                for controller in fields[1].split(separator: ",") { paths[String(controller)] = String(fields[2]) }
            }
        }
        var mounts = CgroupMounts()
        for line in mountinfo.split(separator: "\n") {
            // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let left = halves[0].split(separator: " "), right = halves[1].split(separator: " ")
            guard left.count >= 5, right.count >= 3 else { continue }
            let root = unescape(String(left[3])), mountPoint = unescape(String(left[4]))
            switch right[0] {
            case "cgroup":
                for option in right[2].split(separator: ",") where controllers.contains(String(option)) {
                    let controller = String(option)
                    guard let own = paths[controller], let relative = relative(own, to: root) else { continue }
                    mounts.v1[controller] = mountPoint + relative
                }
            case "cgroup2":
                // A hybrid machine mounts v2 beside v1 with no controllers:
                // it places processes but bounds nothing.
                guard let own = unifiedPath, let relative = relative(own, to: root) else { continue }
                let folder = mountPoint + relative
                let offered = (try? String(contentsOfFile: folder + "/cgroup.controllers", encoding: .utf8)) ?? ""
                mounts.v2 = (folder, Set(offered.split(whereSeparator: \.isWhitespace).map(String.init)))
            default:
                continue
            }
        }
        return mounts
    }

    /// `path` below the mount's `root` (a container sees its own cgroup as
    /// the root), with a leading slash or empty; nil when outside it.
    static func relative(_ path: String, to root: String) -> String? {
        if root == "/" { return path == "/" ? "" : path }
        if path == root { return "" }
        return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count)) : nil
    }

    /// mountinfo writes a space, tab, newline and backslash as octal escapes.
    static func unescape(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3, let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
