import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The cgroups of this process's children (docs/sandbox.md, "Resources"):
/// a folder `plugboard-<pid>` under the process's own cgroup (of each v1
/// controller, or its v2 cgroup where that is delegated), and in it one
/// leaf per child, holding the child's bounds. Never at a hierarchy's root
/// unless the process sits there; leaves are removed as children end, the
/// folder when the process exits, and those of dead processes at the next start.
package final class ChildCgroups: Sendable {
    /// What a leaf can bound here.
    package struct Bound: Sendable, Hashable, CustomStringConvertible {
        package let description: String
        package static let memory = Bound(description: "memory")
        package static let tasks = Bound(description: "tasks")
        package static let cpu = Bound(description: "cpu")
        package static let all: [Bound] = [.memory, .tasks, .cpu]
    }

    /// The cgroup version in use.
    package let version: Int?
    /// Per controller, this process's folder (v2: one folder under "v2").
    let folders: [String: String]
    /// What can be bounded, and why each of the rest cannot (with the fix).
    package let reachable: Set<Bound>
    package let missing: [Bound: String]
    private let leaves = Atomic<Int>(0)
    /// Leaves made and not yet joined by their child: empty, but not for the sweep.
    private let unplaced = Mutex<Set<String>>([])
    /// A leaf made ahead for the next child (in ``unplaced``), and the queue making it.
    private let ready = Mutex<(name: String, folders: [String: String], limits: LeafLimits)?>(nil)
    private let chores = DispatchQueue(label: "plugboard.cgroup-leaves")

    /// This process's, made on first use.
    package static let process = ChildCgroups(mounts: .current(), pid: getpid())

    static let prefix = "plugboard-"
    static let controllerOf: [Bound: String] = [.memory: "memory", .tasks: "pids", .cpu: "cpu"]

    init(mounts: CgroupMounts, pid: pid_t) {
        var folders: [String: String] = [:]
        var missing: [Bound: String] = [:]
        let name = "\(Self.prefix)\(pid)"
        if !mounts.v1.isEmpty {
            version = 1
            for controller in CgroupMounts.controllers {
                guard let own = mounts.v1[controller] else { continue }
                Self.removeStale(in: own)
                let folder = own + "/" + name
                if mkdir(folder, 0o755) == 0 || errno == EEXIST {
                    folders[controller] = folder
                } else {
                    let reason = String(cString: strerror(errno))
                    for (bound, needed) in Self.controllerOf where needed == controller {
                        missing[bound] = "cannot make \(folder) (\(reason)): run the host as root, or where cgroup v2 is delegated to it"
                    }
                }
            }
            for (bound, controller) in Self.controllerOf where mounts.v1[controller] == nil {
                missing[bound] = "this machine mounts no cgroup v1 \(controller) hierarchy"
            }
        } else if let v2 = mounts.v2 {
            version = 2
            let offered = Set(Self.controllerOf.values.filter { v2.controllers.contains($0) })
            Self.removeStale(in: v2.folder)
            let folder = v2.folder + "/" + name
            // Children may use a controller only where their parent enables
            // it, and a cgroup holding processes (this host's own) can enable
            // none: the host needs a delegated cgroup whose processes sit in a
            // leaf (systemd's DelegateSubgroup=). Without controllers a leaf
            // still places, counts CPU time (cpu.stat) and kills (cgroup.kill).
            let enable = offered.sorted().map { "+" + $0 }.joined(separator: " ")
            let enabled = !offered.isEmpty && Self.write(enable, to: v2.folder + "/cgroup.subtree_control")
            if mkdir(folder, 0o755) == 0 || errno == EEXIST {
                folders["v2"] = folder
                let given = enabled && Self.write(enable, to: folder + "/cgroup.subtree_control") ? offered : []
                for (bound, controller) in Self.controllerOf where !given.contains(controller) {
                    missing[bound] = offered.contains(controller)
                        ? "the host's cgroup \(v2.folder) holds its processes, so it cannot give its children the \(controller) controller: run the host in a leaf of a delegated cgroup (systemd Delegate=yes with DelegateSubgroup=)"
                        : "the host's cgroup \(v2.folder) is not given the \(controller) controller: delegate it (systemd Delegate=yes)"
                }
            } else {
                for bound in Bound.all {
                    missing[bound] = "the host's cgroup \(v2.folder) is not delegated to it: run it in a delegated cgroup (systemd-run --scope -p Delegate=yes, or Delegate=yes with DelegateSubgroup= on its service)"
                }
            }
        } else {
            version = nil
            for bound in Bound.all { missing[bound] = "this machine mounts no cgroup hierarchy" }
        }
        self.folders = folders
        self.missing = missing
        reachable = Set(Bound.all.filter { missing[$0] == nil })
        if !folders.isEmpty {
            let all = Array(folders.values)
            removeAtExit(all)
        }
    }

    /// A leaf for one child, with `limits` written: nil for what it does not
    /// bound. The child is placed with ``ChildCgroup/place(_:)``, or joins
    /// it itself (``ChildCgroup/joinedByChild``).
    package func leaf(memory: Int?, tasks: Int?, cpuCores: Double?) -> ChildCgroup? {
        guard !folders.isEmpty else { return nil }
        let limits = LeafLimits(memory: memory, tasks: tasks, cpuCores: cpuCores)
        let taken = ready.withLock { ready in defer { ready = nil }; return ready }
        let (name, made) = taken.map { ($0.name, $0.folders) } ?? makeLeaf()
        let cgroup = ChildCgroup(version: version ?? 1, folders: made) { [self] in
            unplaced.withLock { _ = $0.remove(name) }
            // The next child's leaf, and the sweep, once this child is in
            // (not beside its start: the kernel's cgroup lock is one): a
            // memory cgroup's mkdir takes ~0.1 ms, the four ~0.25 ms.
            chores.async { [self] in
                sweep()
                prepare(limits)
            }
        }
        cgroup.limit(limits, over: taken?.limits ?? .init())
        return cgroup
    }

    /// Returns once the leaf made ahead and the sweep asked for so far are done.
    package func settle() {
        chores.sync {}
    }

    /// The bounds written in a leaf.
    struct LeafLimits: Equatable {
        var memory: Int?
        var tasks: Int?
        var cpuCores: Double?
    }

    /// A new leaf's folders, named before they exist: a sweep on another thread leaves them alone.
    private func makeLeaf() -> (name: String, folders: [String: String]) {
        let name = "child-\(leaves.wrappingAdd(1, ordering: .relaxed).newValue)"
        unplaced.withLock { _ = $0.insert(name) }
        var made: [String: String] = [:]
        for (controller, folder) in folders {
            let leaf = folder + "/" + name
            guard mkdir(leaf, 0o755) == 0 || errno == EEXIST else { continue }
            made[controller] = leaf
        }
        return (name, made)
    }

    /// Makes the leaf the next child takes, with the bounds the last one
    /// had (most hosts give every child the same), unless one is waiting.
    private func prepare(_ limits: LeafLimits) {
        guard ready.withLock({ $0 == nil }) else { return }
        let (name, made) = makeLeaf()
        ChildCgroup(version: version ?? 1, folders: made).limit(limits)
        ready.withLock { ready in
            if ready == nil { ready = (name, made, limits) }
        }
    }

    /// Removes the leaves whose children are gone (a scanner's leaf is
    /// not removed when it is reaped: here, as the next leaf is made). A
    /// leaf still holding a task refuses rmdir, so only empty ones go.
    func sweep() {
        unplaced.withLock { unplaced in
            for folder in folders.values {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("child-") && !unplaced.contains(name) {
                    rmdir(folder + "/" + name)
                }
            }
        }
    }

    /// Removes the leaves of `plugboard-<pid>` folders under `own` whose
    /// process is gone (a host that was killed), then the folders.
    static func removeStale(in own: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: own) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeFolder(own + "/" + name)
        }
    }

    /// A cgroup folder and the leaves in it (rmdir: a cgroup is removed
    /// with rmdir, its files go with it).
    static func removeFolder(_ folder: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("child-") {
            rmdir(folder + "/" + name)
        }
        rmdir(folder)
    }

    /// Writes `text` to a cgroup file in one write: whether it took.
    @discardableResult
    static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// Removes this process's folders when it exits (its children are gone by then or soon).
private let exitFolders = Mutex<[String]>([])
private func removeAtExit(_ folders: [String]) {
    let first = exitFolders.withLock { list in
        defer { list += folders }
        return list.isEmpty
    }
    guard first else { return }
    atexit { exitFolders.withLock { $0 }.forEach(ChildCgroups.removeFolder) }
}
