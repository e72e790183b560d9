import Dispatch
import Foundation
import Plugboard
@testable import PlugboardHost
@testable import PlugboardCore
@testable import PlugboardAdmission
@testable import PlugboardRegistry
@testable import PlugboardServices
@testable import PlugboardLoading
@testable import PlugboardCatalog
@testable import PlugboardIsolation
@testable import PlugboardLifecycle
import Synchronization
import Testing

/// Registry logic with static registration (no dlopen needed for these).
@Suite struct ExtensionRegistryTests {
    struct Named: Command {
        let name: String
        let generation: Int
        var summary: String { "" }
        func run(arguments: [String]) throws -> String { "\(name)@\(generation)" }
    }

    func provider(_ plugin: String, _ name: String, generation: Int = 1) -> RegisteredProvider {
        RegisteredProvider(
            pluginID: plugin, generation: generation, interfaceID: Commands.interface.id,
            provider: Named(name: name, generation: generation))
    }

    @Test func orderIsByPluginIDThenContributionOrderWhateverTheRegistrationOrder() {
        let providers = [
            provider("b.plugin", "b1"), provider("b.plugin", "b2"), provider("a.plugin", "a1"),
            provider("c.plugin", "c1"), provider("a.plugin", "a2"),
        ]
        for _ in 0..<10 {
            let registry = ExtensionRegistry()
            registry.declare(DeclaredExtensionPoint(Commands.self))
            var shuffled = providers.shuffled()
            // Keep each plugin's own order: that is the plugin's to decide.
            shuffled = shuffled.filter { !$0.pluginID.hasPrefix("b") } + providers.filter { $0.pluginID.hasPrefix("b") }
            for group in Dictionary(grouping: shuffled, by: \.pluginID).values.shuffled() {
                registry.replaceProviders(of: [group[0].pluginID], with: group)
            }
            let names = registry.providers(of: Commands.self).map(\.name)
            #expect(names.filter { $0.hasPrefix("b") } == ["b1", "b2"])
            #expect(names.map { $0.prefix(1) } == ["a", "a", "b", "b", "c"])
        }
    }

    @Test func undeclaredPointsReadEmpty() {
        let registry = ExtensionRegistry()
        registry.replaceProviders(of: ["a.plugin"], with: [provider("a.plugin", "x")])
        #expect(registry.providers(of: Commands.self).isEmpty)
        #expect(registry.registrations(for: Commands.interface.id).count == 1)
    }

    /// Many threads read while one replaces a plugin's providers 2,000 times:
    /// every read sees one whole generation (never a mix, never empty).
    @Test func readersNeverSeeAHalfUpdatedRegistry() {
        let registry = ExtensionRegistry()
        registry.declare(DeclaredExtensionPoint(Commands.self))
        let plugins = ["a.plugin", "b.plugin", "c.plugin"]
        registry.replaceProviders(of: Set(plugins), with: plugins.map { provider($0, $0, generation: 0) })
        final class Counters: Sendable {
            let done = Atomic<Bool>(false)
            let reads = Atomic<Int>(0)
            let torn = Atomic<Int>(0)
        }
        let counters = Counters()
        // Real threads, not tasks: spinning readers would starve the
        // cooperative pool (as wide as the core count) and the writer with it.
        let readers = DispatchGroup()
        // Readers and the writer start together, so reads overlap the writes.
        let start = Barrier(count: 5)
        for _ in 0..<4 {
            readers.enter()
            Thread.detachNewThread {
                start.arriveAndWait()
                while !counters.done.load(ordering: .relaxed) {
                    let seen = registry.providers(of: Commands.self).compactMap { $0 as? Named }
                    if seen.count != 3 || Set(seen.map(\.generation)).count != 1 {
                        counters.torn.add(1, ordering: .relaxed)
                    }
                    counters.reads.add(1, ordering: .relaxed)
                }
                readers.leave()
            }
        }
        start.arriveAndWait()
        // At least 2,000 writes, and on until readers have read during them
        // (on a loaded machine they may not have run yet): bounded by count.
        var generation = 0
        repeat {
            generation += 1
            registry.replaceProviders(of: Set(plugins), with: plugins.map { provider($0, $0, generation: generation) })
        } while generation < 2000 || (counters.reads.load(ordering: .relaxed) < 100 && generation < 10_000_000)
        let readsDuringWrites = counters.reads.load(ordering: .relaxed)
        counters.done.store(true, ordering: .relaxed)
        readers.wait()
        #expect(counters.torn.load(ordering: .relaxed) == 0)
        #expect(readsDuringWrites > 0, "no read overlapped the writes: the test proved nothing")
        #expect(registry.providers(of: Commands.self).compactMap { ($0 as? Named)?.generation } == [generation, generation, generation])
    }
}
