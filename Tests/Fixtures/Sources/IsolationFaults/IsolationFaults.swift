import Foundation
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A plugin meant to run isolated: one command, `fault MODE`, misbehaves
/// as MODE says, so each fault of the isolation tests is one call. Its init
/// and activate crash when the file named by PLUGBOARD_FIXTURE_CRASH_INIT or
/// PLUGBOARD_FIXTURE_CRASH_ACTIVATE exists (the test creates it after the
/// first start, so the crash happens on a restart).
final class IsolationFaults: Plugin, ReloadableState {
    let storage: (any KeyValueStore)?
    let log: (any PluginLogger)?
    let greeting: String
    let events: (any EventBus)?
    /// Counted by `fault count`, handed over by a hot reload.
    let counter = Mutex(0)
    /// One line on the FIFO TMPDIR/plugboard-fixture-parked, when a test made it.
    static func announce(_ line: String) {
        guard let folder = ProcessInfo.processInfo.environment["TMPDIR"],
              access(folder + "/plugboard-fixture-parked", F_OK) == 0,
              let fifo = fopen(folder + "/plugboard-fixture-parked", "w") else { return }
        fputs(line + "\n", fifo)
        fclose(fifo)
    }

    /// `fault serial-spin`'s lock, and its count of spins.
    static let serial = Mutex(0)

    /// The burst events that came: how many, whether in order, and markers.
    static let burst = Mutex((count: 0, last: -1, inOrder: true, markers: 0))

    /// `fault barrier`'s gates, by tag: the semaphore and the calls that came.
    static let barriers = Mutex<[String: (DispatchSemaphore, Int)]>([:])

    func saveState() -> Int { counter.withLock { $0 } }
    func restoreState(_ state: Int) { counter.withLock { $0 = state } }

    init(context: PluginContext) throws {
        if let marker = ProcessInfo.processInfo.environment["PLUGBOARD_FIXTURE_CRASH_INIT"], access(marker, F_OK) == 0 {
            fatalError("IsolationFaults: crashing in init on purpose")
        }
        storage = try? context.service(Services.Storage.self)
        log = try? context.service(Services.Logging.self)
        greeting = (try? context.service(Services.Configuration.self))?.string("greeting") ?? "unset"
        let events = try? context.service(Services.Events.self)
        self.events = events
        // Answers each ping with a pong carrying its text and the pid that handled it.
        events?.subscribe(Ping.self) { ping in
            events?.publish(Pong(text: ping.text, pid: Int(getpid())))
        }
        // Dies between calls, in an event handler.
        events?.subscribe(to: "fixture.die") { _ in fatalError("IsolationFaults: crashing in an event handler") }
        // Stuck until the test lets it go: says "stuck" on the FIFO
        // TMPDIR/plugboard-fixture-parked, waits for TMPDIR/release to close.
        events?.subscribe(to: "fixture.stuck") { _ in
            IsolationFaults.announce("stuck")
            guard let folder = ProcessInfo.processInfo.environment["TMPDIR"] else { return }
            let fd = open(folder + "/release", O_RDONLY)
            var byte: UInt8 = 0
            while fd >= 0 && read(fd, &byte, 1) > 0 {}
            if fd >= 0 { close(fd) }
        }
        // A burst's events carry their numbers (0, 1, ...), counted here
        // and checked for order; a negative number is a marker, answered
        // with a pong "marker N". `fault burst` tells what came.
        events?.subscribe(Burst.self) { burst in
            guard burst.number >= 0 else {
                IsolationFaults.burst.withLock { $0.markers += 1 }
                events?.publish(Pong(text: "marker \(-burst.number)", pid: Int(getpid())))
                return
            }
            IsolationFaults.burst.withLock { state in
                if burst.number <= state.last { state.inOrder = false }
                state.last = burst.number
                state.count += 1
            }
        }
        // A cycle through the child: each echo publishes the same event.
        events?.subscribe(to: "fixture.echo") { payload in
            events?.publish(payload)
        }
    }

    func activate() throws {
        if let marker = ProcessInfo.processInfo.environment["PLUGBOARD_FIXTURE_CRASH_ACTIVATE"], access(marker, F_OK) == 0 {
            fatalError("IsolationFaults: crashing in activate on purpose")
        }
    }

    func deactivate() {
        log?.info("deactivated")
    }

    static var defaultConfiguration: [String: ConfigValue] { ["greeting": .string("hello")] }

    func contributions() -> [Contribution] { [.provider(Fault(plugin: self), for: Commands.self)] }

    struct Fault: Command {
        let plugin: IsolationFaults
        var name: String { "fault" }
        var summary: String { "misbehaves as its argument says" }

        func run(arguments: [String]) throws -> String {
            switch arguments.first ?? "" {
            case "echo": return arguments.dropFirst().joined(separator: " ")
            case "pid": return String(getpid())
            case "burst":
                let state = IsolationFaults.burst.withLock { $0 }
                return "\(state.count) \(state.inOrder ? "in-order" : "out-of-order") \(state.markers)"
            case "count": return String(plugin.counter.withLock { count in
                count += 1
                return count
            })
            case "greeting": return plugin.greeting
            case "flood":
                // `flood N`: publishes N Pong events as fast as it can.
                let count = Int(arguments.dropFirst().first ?? "") ?? 0
                for index in 0..<count { plugin.events?.publish(Pong(text: "flood \(index)", pid: Int(getpid()))) }
                return "flooded"
            case "sleep":
                // `sleep MS`: a call that takes MS milliseconds, blocking its
                // thread (the benchmark's slow call: the time is the point).
                usleep(useconds_t(max(0, Int(arguments.dropFirst().first ?? "") ?? 0)) * 1_000)
                return "slept"
            case "serial-spin":
                // `serial-spin MS`: busy for MS milliseconds of CPU under
                // the plugin's own lock, so one child runs one at a time (a
                // plugin that is not thread-safe): what a pool spreads.
                let milliseconds = Double(Int(arguments.dropFirst().first ?? "") ?? 0)
                return IsolationFaults.serial.withLock { spins in
                    let start = DispatchTime.now().uptimeNanoseconds
                    while Double(DispatchTime.now().uptimeNanoseconds - start) < milliseconds * 1_000_000 { spins &+= 1 }
                    return "spun"
                }
            case "barrier":
                // `barrier N TAG`: returns once N calls with TAG are inside
                // the plugin at once (each waits on this thread): proof that
                // calls overlap. Gives up after 120 s, saying how many came.
                let wanted = Int(arguments.dropFirst().first ?? "") ?? 2
                let tag = arguments.dropFirst(2).first ?? ""
                let gate = IsolationFaults.barriers.withLock { barriers -> (DispatchSemaphore, Int) in
                    var barrier = barriers[tag] ?? (DispatchSemaphore(value: 0), 0)
                    barrier.1 += 1
                    barriers[tag] = barrier
                    return barrier
                }
                if gate.1 == wanted { for _ in 0..<wanted { gate.0.signal() } }
                return gate.0.wait(timeout: .now() + 120) == .success
                    ? "met \(wanted)" : "not met: \(IsolationFaults.barriers.withLock { $0[tag]?.1 ?? 0 }) of \(wanted) came"
            case "cancellable":
                // `cancellable FIFO`: parks as `park` does, then says on the
                // FIFO TMPDIR/plugboard-fixture-parked whether the task
                // serving it was cancelled meanwhile (the host's caller was).
                let fd = open(arguments.dropFirst().first ?? "/nonexistent", O_RDONLY)
                guard fd >= 0 else { return "no FIFO to wait on" }
                IsolationFaults.announce("parked \(getpid())")
                var byte: UInt8 = 0
                while read(fd, &byte, 1) > 0 {}
                close(fd)
                IsolationFaults.announce(Task.isCancelled ? "cancelled" : "not cancelled")
                return "returned"
            case "park":
                // `park FIFO`: opens FIFO (the test holds its write end), says
                // so on the FIFO TMPDIR/plugboard-fixture-parked, then waits
                // for the test to close its end.
                let fd = open(arguments.dropFirst().first ?? "/nonexistent", O_RDONLY)
                guard fd >= 0 else { return "no FIFO to wait on" }
                IsolationFaults.announce("parked \(getpid())")
                var byte: UInt8 = 0
                while read(fd, &byte, 1) > 0 {}
                close(fd)
                return "released"
            case "store":
                try plugin.storage?.set(Array((arguments.dropFirst(2).first ?? "").utf8), for: arguments.dropFirst().first ?? "key")
                return "stored"
            case "load":
                let bytes = try plugin.storage?.value(for: arguments.dropFirst().first ?? "key")
                return bytes.map { String(decoding: $0, as: UTF8.self) } ?? "none"
            case "publish":
                plugin.events?.publish(Pong(text: arguments.dropFirst().joined(separator: " "), pid: Int(getpid())))
                return "published"
            case "log":
                plugin.log?.warning(arguments.dropFirst().joined(separator: " "))
                return "logged"
            case "print-lines":
                // `print-lines N`: N lines, one write each (a crash's stack trace comes so).
                for number in 1...max(1, Int(arguments.dropFirst().first ?? "") ?? 1) {
                    let line = "line \(number) of a burst\n"
                    _ = line.withCString { write(1, $0, strlen($0)) }
                }
                return "printed"
            case "print":
                print("printed by an isolated plugin during a call")
                fflush(nil)
                return "printed"
            case "segv":
                let pointer = UnsafeMutablePointer<Int>(bitPattern: 8)!
                pointer.pointee = 1
                return "unreachable"
            case "fatal": fatalError("IsolationFaults: fatalError in a call")
            case "exit0": exit(0)
            case "thread":
                let thread = Thread { fatalError("IsolationFaults: a thread of the plugin crashes") }
                thread.start()
                pause()
                return "unreachable"
            case "hang":
                // Tells a waiting test its pid (an event): TMPDIR is one of
                // the few variables an isolated child is given.
                if let folder = ProcessInfo.processInfo.environment["TMPDIR"],
                   access(folder + "/plugboard-fixture-pid", F_OK) == 0,
                   let fifo = fopen(folder + "/plugboard-fixture-pid", "w") {
                    fputs("\(getpid())\n", fifo)
                    fclose(fifo)
                }
                while true { pause() }
            case "alloc":
                var blocks: [UnsafeMutableRawPointer] = []
                while true {
                    guard let block = malloc(64 << 20) else { fatalError("IsolationFaults: out of memory") }
                    memset(block, 1, 64 << 20)
                    blocks.append(block)
                }
            case "fds":
                var opened = 0
                while open("/dev/null", O_RDONLY) >= 0 { opened += 1 }
                return "opened \(opened) before \(String(cString: strerror(errno)))"
            case "close-channel":
                close(3)
                close(4)
                pause()
                return "unreachable"
            case "oversized":
                // A reply frame whose length is far over the limit, written
                // straight onto the reply pipe.
                var frame: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F]
                frame += [UInt8](repeating: 0, count: 9)
                _ = write(4, &frame, frame.count)
                pause()
                return "unreachable"
            case "malformed":
                var frame: [UInt8] = [2, 0, 0, 0, 12, 0]
                _ = write(4, &frame, frame.count)
                pause()
                return "unreachable"
            case "ring-outside":
                // A note that its frame is in the child's shared ring (fd 8),
                // running past the ring's end: 64 MiB (the largest frame)
                // from 8 bytes before it, well into memory the host never mapped.
                var frame: [UInt8] = [17, 0, 0, 0, 18]
                withUnsafeBytes(of: (UInt64(16 << 20) - 8).littleEndian) { frame += $0 }
                withUnsafeBytes(of: UInt64(64 << 20).littleEndian) { frame += $0 }
                _ = write(4, &frame, frame.count)
                pause()
                return "unreachable"
            case "forge-drops":
                // Three notices (fd 5) claiming 4,294,967,295 events dropped
                // each, none of which the host sent; then a pong after them.
                var notice: [UInt8] = []
                for _ in 0..<3 { notice += [5, 0, 0, 0, 7, 0xFF, 0xFF, 0xFF, 0xFF] }
                _ = write(5, &notice, notice.count)
                plugin.events?.publish(Pong(text: "forged", pid: Int(getpid())))
                return "forged"
            case "ring-shrink":
                // Shrinking either ring would make the host's next read of it a SIGBUS.
                let refused = [7, 8].allSatisfy { ftruncate($0, 0) != 0 && errno == EPERM }
                return refused ? "refused" : "shrunk"
            case "ring-marks":
                // Both rings' release marks: the child's own (fd 7, host to
                // child) and the host's (fd 8); 0 for a ring never read.
                return [7, 8].map { fd -> String in
                    guard let ring = mmap(nil, 4096, PROT_READ, MAP_SHARED, Int32(fd), 0), ring != MAP_FAILED else { return "none" }
                    defer { munmap(ring, 4096) }
                    return String(ring.load(as: UInt64.self))
                }.joined(separator: " ")
            case "ring-mark":
                // A release mark far past anything the host wrote, in the host's ring (fd 7).
                guard let ring = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 7, 0), ring != MAP_FAILED else { return "no ring" }
                ring.storeBytes(of: UInt64(1) << 40, as: UInt64.self)
                munmap(ring, 4096)
                return "marked"
            case "main":
                // Work queued on the main queue: run only where the main
                // thread serves it (an isolated child does).
                let ran = DispatchSemaphore(value: 0)
                DispatchQueue.main.async { ran.signal() }
                return ran.wait(timeout: .now() + 5) == .success ? "main ran" : "main not served"
            case "runloop":
                // Foundation's main run loop: a timer on it fires where the
                // child's main thread runs that loop.
                let ran = DispatchSemaphore(value: 0)
                RunLoop.main.add(Timer(timeInterval: 0.01, repeats: false) { _ in ran.signal() }, forMode: .common)
                return ran.wait(timeout: .now() + 5) == .success ? "timer fired" : "run loop not served"
            case "bytes":
                return String(repeating: "x", count: Int(arguments.dropFirst().first ?? "0") ?? 0)
            default: throw FaultError(mode: arguments.first ?? "")
            }
        }
    }

    struct Ping: PluginEvent {
        static let name = "fixture.ping"
        let text: String
    }

    struct Burst: PluginEvent {
        static let name = "fixture.burst"
        let number: Int
    }

    struct Pong: PluginEvent {
        static let name = "fixture.pong"
        let text: String
        let pid: Int
    }

    struct FaultError: Error, CustomStringConvertible {
        let mode: String
        var description: String { "unknown mode '\(mode)'" }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: IsolationFaults.self, id: "fixture.isolation-faults", version: "1.0.0", provides: [Commands.interface],
        services: [Services.Storage.id, Services.Logging.id, Services.Configuration.id, Services.Events.id])
}
