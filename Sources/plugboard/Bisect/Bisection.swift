/// Finds the smallest set of plugins whose being enabled makes a check
/// fail: halving, as VS Code's extension bisect does, and, when neither
/// half fails alone (plugins that break only together), minimising each
/// half with the other enabled.
///
/// `fails` runs the check with a set of plugins enabled (the caller adds
/// what they require). It must fail with every candidate and pass with none;
/// ``run(_:)`` checks both first.
struct Bisection {
    /// One run of the check.
    struct Step: Encodable {
        let number: Int
        /// Plugins enabled for this run, dependencies included, sorted.
        let enabled: [String]
        let failed: Bool
        /// The same plugins ran before (dependencies brought them): its
        /// verdict was reused, the check not run again.
        let reused: Bool
    }

    enum Outcome {
        /// The smallest set found: every plugin in it is needed to fail.
        case culprits([String])
        /// The check passes with every plugin enabled: nothing to look for.
        case passesWithAll
        /// The check fails with no plugin enabled: plugins are not the cause.
        case failsWithNone
    }

    let candidates: [String]
    /// Runs the check with `enabled` (the candidates to enable); true when it fails.
    let fails: (Set<String>) -> (enabled: [String], failed: Bool, reused: Bool)
    /// Hears each step as it finishes.
    let report: (Step) -> Void

    private final class Counter { var value = 0 }
    private let counter = Counter()

    func run() -> Outcome {
        guard check(Set(candidates)) else { return .passesWithAll }
        guard !check([]) else { return .failsWithNone }
        return .culprits(minimize(candidates, keeping: []).sorted())
    }

    /// The smallest part of `set` that fails together with `base`, knowing
    /// `base ∪ set` fails and `base` alone passes.
    private func minimize(_ set: [String], keeping base: Set<String>) -> [String] {
        guard set.count > 1 else { return set }
        let first = Array(set[..<(set.count / 2)]), second = Array(set[(set.count / 2)...])
        if check(base.union(first)) { return minimize(first, keeping: base) }
        if check(base.union(second)) { return minimize(second, keeping: base) }
        // Neither half alone: some of each are needed together.
        let fromFirst = minimize(first, keeping: base.union(second))
        return fromFirst + minimize(second, keeping: base.union(fromFirst))
    }

    private func check(_ enabled: Set<String>) -> Bool {
        let result = fails(enabled)
        counter.value += 1
        report(Step(number: counter.value, enabled: result.enabled, failed: result.failed, reused: result.reused))
        return result.failed
    }
}
