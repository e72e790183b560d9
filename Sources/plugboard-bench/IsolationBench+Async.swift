import DemoInterfaces
import Foundation
import Plugboard
import PlugboardHost
import Synchronization

/// Async callers against blocking threads on one isolated child (the
/// fixture AsyncQuoter: an `async` quote and a blocking `echo` command):
/// the async requirement's call is sent from its task and resumed by the
/// reader of the replies, so it should cost what a thread's call costs;
/// `withoutBlocking` hands each call to a host thread and back.
extension IsolationBench {
    /// These rows alone (`PLUGBOARD_BENCH_ONLY=async`).
    func runAsyncPath(into report: Report) {
        withFixtureFolder("async") { dir in
            report.begin("Isolated calls from async code (µs per call)")
            asyncPath(dir, into: report)
        }
    }

    func asyncPath(_ dir: String, into report: Report) {
        guard let asyncPlugin else { return }
        let folder = dir + "/async"
        guard stage(asyncPlugin, in: folder, as: "quoter.so") else { return }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: folder + "/plugins", dataDirectory: folder + "/data", logSink: BenchSuite.quiet, cacheDirectory: folder + "/cache")
        configuration.isolation.others = .isolated
        let host = PluginHost(configuration: configuration)
        host.declare(Quotes.self)
        host.declare(Commands.self)
        defer { host.shutdown() }
        // A row left out says why: a bench that skips silently hides a regression.
        let quoter: any Quoting, echo: any Command
        do {
            try host.start()
            guard let found = host.registry.handle(for: Quotes.self).first,
                  let command = host.registry.providers(of: Commands.self).first(where: { $0.name == "echo" })
            else { throw BenchHostMissing(diagnostics: host.diagnostics.map(\.description)) }
            guard try command.run(arguments: ["x"]) == "x" else { throw BenchHostMissing(diagnostics: ["echo answered wrong"]) }
            (quoter, echo) = (found, command)
        } catch {
            print("  isolation bench: the async fixture did not serve: \(error)")
            return
        }
        let callers = 16, perCaller = 1_000
        var rates: (threads: [Double], tasks: [Double], withoutBlocking: [Double]) = ([], [], [])
        for _ in 0..<5 {
            rates.threads.append(together(callers: callers) { for _ in 0..<perCaller { _ = try? echo.run(arguments: ["x"]) } })
            rates.tasks.append(tasks(callers) { for _ in 0..<perCaller { _ = try? await quoter.quote("x") } })
            rates.withoutBlocking.append(tasks(callers) {
                for _ in 0..<perCaller { _ = try? await IsolatedCallPolicy.withoutBlocking { try echo.run(arguments: ["x"]) } }
            })
        }
        let perCall = { (samples: [Double]) in samples.map { $0 / 1_000 / Double(callers * perCaller) } }
        report.add("isolated async calls from 16 tasks (an async requirement), µs per call (wall)", unit: "µs", samples: perCall(rates.tasks),
                   baselineName: "the same child's blocking calls from 16 threads", baseline: perCall(rates.threads), goal: .ratioAtMost(1.1),
                   note: String(format: "%.0f calls/s from 16 tasks; go-plugin 1.0.1 net/rpc from 16 callers, issue 36 on this machine: 44,250",
                                1_000_000 / Measure.median(perCall(rates.tasks))))
        report.add("isolated blocking calls through withoutBlocking from 16 tasks, µs per call (wall)", unit: "µs",
                   samples: perCall(rates.withoutBlocking),
                   baselineName: "the same child's blocking calls from 16 threads", baseline: perCall(rates.threads))
    }

    /// Nanoseconds for `count` tasks, released together, to each run `body`.
    private func tasks(_ count: Int, _ body: @escaping @Sendable () async -> Void) -> Double {
        let done = DispatchSemaphore(value: 0)
        let elapsed = Mutex<Double>(0)
        Task {
            let start = Measure.now()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<count { group.addTask { await body() } }
            }
            elapsed.withLock { $0 = Double(Measure.now() - start) }
            done.signal()
        }
        done.wait()
        return elapsed.withLock { $0 }
    }
}
