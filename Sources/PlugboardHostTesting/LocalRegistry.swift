import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real OCI registry (Debian's docker-registry, CNCF distribution) on
/// 127.0.0.1 with a port it picks, for the fleet tests and benchmark: its
/// storage in a folder of the caller's, `extraConfig` appended to its
/// configuration (an `auth:` section), stopped by ``stop()``.
package final class LocalRegistry: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read
    // after; the reap in stop() is guarded by an atomic exchange.
    package let port: Int
    package let storage: String
    private let pid: pid_t
    private let stopped = Atomic<Bool>(false)

    package static let program: String? = ["/usr/bin/docker-registry", "/usr/sbin/docker-registry"].first { FileManager.default.isExecutableFile(atPath: $0) }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package init(storage: String, extraConfig: String = "") throws {
        guard let program = Self.program else {
            throw Failure(description: "docker-registry is not installed: run `sudo apt-get install docker-registry` (make test installs it as root)")
        }
        self.storage = storage
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        let config = storage + "/config.yml"
        let text = "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: \(storage)/data\n  delete:\n    enabled: true\n"
            + "http:\n  addr: 127.0.0.1:0\n  secret: plugboard-tests\n" + extraConfig
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        // FoundationEssentials has no Process (and this module stays free
        // of Foundation, which the fuzzer would load): posix_spawn.
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup("serve"), strdup(config), nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, program, &actions, nil, argv, environ)
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            throw Failure(description: "cannot start \(program): \(String(cString: strerror(spawned)))")
        }
        pid = child
        // The port is in the line "listening on 127.0.0.1:PORT": read until it comes.
        let reader = pipe[0]
        var output = ""
        var found: Int?
        var buffer = [UInt8](repeating: 0, count: 4096)
        while found == nil {
            let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output += String(decoding: buffer[..<count], as: UTF8.self)
            // Split on the marker (no String.range in FoundationEssentials).
            let parts = output.split(separator: "listening on 127.0.0.1:", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 {
                let digits = parts[1].prefix { $0.isNumber }
                if digits.count < parts[1].count { found = Int(digits) }
            }
        }
        guard let found else {
            kill(child, SIGTERM)
            var status: Int32 = 0
            waitpid(child, &status, 0)
            close(reader)
            throw Failure(description: "docker-registry did not start: \(output.suffix(2000))")
        }
        port = found
        // Drained to the end on a thread of its own, so the registry never blocks on its log.
        var thread = pthread_t()
        let context = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        context.pointee = reader
        pthread_create(&thread, nil, { raw in
            let descriptor = raw!.assumingMemoryBound(to: Int32.self)
            let reader = descriptor.pointee
            descriptor.deallocate()
            var sink = [UInt8](repeating: 0, count: 4096)
            while sink.withUnsafeMutableBytes({ read(reader, $0.baseAddress, $0.count) }) > 0 {}
            close(reader)
            return nil
        }, context)
        pthread_detach(thread)
    }

    deinit { stop() }

    package var address: String { "127.0.0.1:\(port)" }

    /// Stops the registry (SIGTERM) and waits for it.
    package func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// The stored data file of a blob (to damage it in a test).
    package func blobFile(_ digest: String) -> String {
        let hex = String(digest.dropFirst(7))
        return "\(storage)/data/docker/registry/v2/blobs/sha256/\(hex.prefix(2))/\(hex)/data"
    }
}
