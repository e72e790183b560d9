import Foundation

/// Timing helpers. Every figure is reported as a ratio against a baseline
/// measured in the same run, because absolute times on a shared machine drift.
enum Measure {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Nanoseconds per iteration of `body` in each of `rounds` rounds: the
    /// samples a report row takes its median and spread from.
    static func samples(iterations: Int, rounds: Int = 9, _ body: (Int) -> Void) -> [Double] {
        withoutActuallyEscaping(body) { body in interleavedSamples(iterations: iterations, rounds: rounds, [body])[0] }
    }

    /// ``samples(iterations:rounds:_:)`` for several paths at once, their
    /// rounds taken in turn (a round of each, then the next round of each),
    /// so a slow spell of the machine falls on all of them rather than on
    /// whichever ran then: for rows that are a ratio of two of them.
    static func interleavedSamples(iterations: Int, rounds: Int = 9, _ bodies: [(Int) -> Void]) -> [[Double]] {
        for body in bodies {
            for index in 0..<min(iterations, 1_000) { body(index) }  // warm up
        }
        var samples = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<rounds {
            for (which, body) in bodies.enumerated() {
                let start = now()
                for index in 0..<iterations { body(index) }
                samples[which].append(Double(now() - start) / Double(iterations))
            }
        }
        return samples
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
