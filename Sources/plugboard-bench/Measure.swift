import Foundation

/// Timing helpers. Every figure is reported as a ratio against a baseline
/// measured in the same run, because absolute times on a shared machine drift.
enum Measure {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Nanoseconds per iteration of `body` in each of `rounds` rounds: the
    /// samples a report row takes its median and spread from.
    static func samples(iterations: Int, rounds: Int = 9, _ body: (Int) -> Void) -> [Double] {
        for index in 0..<min(iterations, 1_000) { body(index) }  // warm up
        return (0..<rounds).map { _ in
            let start = now()
            for index in 0..<iterations { body(index) }
            return Double(now() - start) / Double(iterations)
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}

/// Keeps the optimizer from deleting benchmarked work.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
