import Foundation
import Plugboard
import PlugboardDemo
@testable import PlugboardHost
import Synchronization
import Testing

/// Several threads call the plugin through the registry during 40 reloads:
/// every call completes on one whole generation, none is lost.
/// `make test-tsan` runs this suite under ThreadSanitizer (Tests/ThreadSanitized).
@Suite struct ReloadStressTests {
    @Test func callsDuringManyReloadsAreNeverLostOrTorn() throws {
        let dir = try TemporaryDirectory()
        let host = PluginHost(configuration: .with(imagesDirectory: dir.file("generations"), cacheDirectory: dir.file("cache")))
        defer { host.shutdown(); withExtendedLifetime(dir) {} }
        host.declareDemoExtensionPoints()
        #expect(host.load(reloadable: try Fixtures.library("ReloadV1").path).status == .active)
        let builds = [try Fixtures.library("ReloadV2").path, try Fixtures.library("ReloadV1").path]
        final class Counters: Sendable {
            let done = Atomic<Bool>(false)
            /// Times a caller's answer came from another generation than its
            /// previous answer: each is a call on each side of a reload.
            let switchesSeen = Atomic<Int>(0)
            let bad = Mutex<[String]>([])
        }
        let counters = Counters()
        // Four callers and the reloading thread start together, so calls overlap the reloads.
        let start = Barrier(count: 5)
        let callers = DispatchGroup()
        for _ in 0..<4 {
            callers.enter()
            Thread.detachNewThread {
                start.arriveAndWait()
                var last: Substring?
                while !counters.done.load(ordering: .acquiring) {
                    let providers = host.registry.providers(of: Commands.self).filter { $0.name == "reloadable" }
                    guard providers.count == 1 else {
                        counters.bad.withLock { $0.append("saw \(providers.count) providers") }
                        continue
                    }
                    let answer = (try? providers[0].run(arguments: [])) ?? "threw"
                    guard answer.hasPrefix("v1 call ") || answer.hasPrefix("v2 call ") else {
                        counters.bad.withLock { $0.append(answer) }
                        continue
                    }
                    let generation = answer.prefix(2)
                    if let last, last != generation { counters.switchesSeen.add(1, ordering: .relaxed) }
                    last = generation
                }
                callers.leave()
            }
        }
        start.arriveAndWait()
        var reloads = 0
        for index in 0..<40 {
            let outcome = host.reload("fixture.reloadable", from: builds[index % 2])
            if outcome.result == .reloaded { reloads += 1 }
        }
        counters.done.store(true, ordering: .releasing)
        callers.wait()
        #expect(reloads == 40)
        #expect(counters.bad.withLock { $0 }.isEmpty, "\(counters.bad.withLock { Array($0.prefix(5)) })")
        #expect(counters.switchesSeen.load(ordering: .relaxed) > 0, "no caller called on both sides of a reload: the test proved nothing")
    }
}
