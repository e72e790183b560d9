import Foundation

/// The one table `make bench` prints, and writes as JSON: each path with its
/// figure (median and spread of repeated runs), the baseline measured in the
/// same run, the ratio, the goal, and whether it was met.
final class Report: @unchecked Sendable {
    // @unchecked: the benchmark runs on one thread; rows are only appended there.

    /// What a goal compares.
    enum Goal: Codable {
        /// figure / baseline at most this.
        case ratioAtMost(Double)
        /// figure / baseline below this (the path beats its baseline).
        case ratioBelow(Double)
        /// baseline / figure at least this (the path is this many times faster).
        case fasterAtLeast(Double)
        /// the figure itself below this, in the row's unit.
        case below(Double)

        var text: String {
            switch self {
            case let .ratioAtMost(limit): String(format: "≤ %gx", limit)
            case let .ratioBelow(limit): String(format: "< %gx", limit)
            case let .fasterAtLeast(limit): String(format: "≥ %gx faster", limit)
            case let .below(limit): String(format: "< %g", limit)
            }
        }
    }

    struct Row: Codable {
        let section: String
        let path: String
        let unit: String
        /// Median of the samples.
        let figure: Double
        let low: Double
        let high: Double
        let samples: Int
        let baselineName: String?
        let baseline: Double?
        /// figure / baseline.
        let ratio: Double?
        let goal: Goal?
        let goalText: String?
        let met: Bool?
        let note: String?
    }

    private(set) var rows: [Row] = []
    private var section = ""

    func begin(_ section: String) { self.section = section }

    /// Adds a row from repeated samples of one path (and of its baseline).
    func add(
        _ path: String, unit: String, samples: [Double], baselineName: String? = nil, baseline: [Double]? = nil,
        goal: Goal? = nil, note: String? = nil
    ) {
        guard !samples.isEmpty else { return }
        let figure = Measure.median(samples)
        let base = baseline.flatMap { $0.isEmpty ? nil : Measure.median($0) }
        let ratio = base.map { figure / $0 }
        let met: Bool? = goal.map { goal in
            switch goal {
            case let .ratioAtMost(limit): (ratio ?? .infinity) <= limit
            case let .ratioBelow(limit): (ratio ?? .infinity) < limit
            case let .fasterAtLeast(limit): (ratio.map { 1 / $0 } ?? 0) >= limit
            case let .below(limit): figure < limit
            }
        }
        rows.append(Row(
            section: section, path: path, unit: unit, figure: figure, low: samples.min()!, high: samples.max()!,
            samples: samples.count, baselineName: baselineName, baseline: base, ratio: ratio, goal: goal,
            goalText: goal?.text, met: met, note: note))
    }

    // MARK: - Output

    func print(json path: String) {
        Swift.print("\nSummary: every path against its baseline from this run (median of the runs, min–max in brackets)")
        let header = [("path", 50), ("figure", 30), ("baseline", 34), ("ratio", 22), ("goal", 14)]
        Swift.print("  " + header.map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined() + "met")
        var current = ""
        for row in rows {
            if row.section != current {
                current = row.section
                Swift.print("  \(current)")
            }
            let figure = "\(Self.format(row.figure, row.unit)) (\(Self.format(row.low, row.unit))–\(Self.format(row.high, row.unit)))"
            let baseline = row.baseline.map { "\(Self.format($0, row.unit)) \(row.baselineName ?? "")" } ?? ""
            let ratio: String
            if let r = row.ratio {
                if case .fasterAtLeast = row.goal { ratio = String(format: "%.2fx (%.1fx faster)", r, 1 / r) } else { ratio = String(format: "%.2fx", r) }
            } else {
                ratio = ""
            }
            let mark = row.met.map { $0 ? "ok" : "✗ MISSED" } ?? ""
            let cells = [("  " + row.path, 50), (figure, 30), (baseline, 34), (ratio, 22), (row.goalText ?? "", 14)]
            Swift.print("  " + cells.map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined() + mark)
            if let note = row.note { Swift.print("      " + note) }
        }
        let missed = rows.filter { $0.met == false }
        Swift.print(missed.isEmpty ? "  goals: all met" : "  goals: \(missed.count) missed (✗): " + missed.map(\.path).joined(separator: "; "))
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try FileManager.default.createDirectory(
                atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
            try encoder.encode(Document(date: ISO8601DateFormatter().string(from: Date()), rows: rows)).write(to: URL(fileURLWithPath: path))
            Swift.print("  written to \(path)")
        } catch {
            Swift.print("  cannot write \(path): \(error)")
        }
    }

    struct Document: Codable {
        let date: String
        let rows: [Row]
    }

    static func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "ns":
            switch value {
            case ..<1_000: String(format: "%.1f ns", value)
            case ..<1_000_000: String(format: "%.2f µs", value / 1_000)
            default: String(format: "%.2f ms", value / 1_000_000)
            }
        case "ms": String(format: value < 10 ? "%.2f ms" : "%.0f ms", value)
        case "KiB": String(format: "%.0f KiB", value)
        case "allocations": String(format: "%.1f", value)
        default: String(format: "%.2f \(unit)", value)
        }
    }
}
