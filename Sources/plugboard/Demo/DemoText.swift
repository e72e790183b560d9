import PlugboardCommandLine
import DemoInterfaces
import Plugboard
import PlugboardDemo
import PlugboardHost

/// The demo report for a person: headings, aligned columns, colour on a TTY.
enum DemoText {
    static func render(_ report: DemoReport) -> String {
        var out: [String] = []
        func heading(_ number: Int, _ text: String) {
            out.append("")
            out.append(Terminal.style("\(number). \(text)", .bold))
        }
        func section(_ rendered: RenderedSection, from plugin: String? = nil) {
            out.append("   " + Terminal.style("┌ \(rendered.title)", .cyan) + (plugin.map { Terminal.style("   (\($0))", .dim) } ?? ""))
            for line in rendered.lines { out.append("   │ \(line)") }
        }

        out.append(Terminal.style("Plugboard demo host", .bold))
        let active = report.plugins.filter { $0.status == .active }.count
        out.append("   \(report.plugins.count) plugin file(s), \(active) active")
        var table = Table(header: ["STATUS", "ID", "VERSION", "PROVIDES"])
        for record in report.plugins {
            table.rows.append([
                .init(text: record.status.rawValue, style: RecordText.statusStyle(record.status)),
                .init(text: record.id ?? RecordText.fileName(record.path)),
                .init(text: record.version?.description ?? "-"),
                .init(text: RecordText.provides(record)),
            ])
        }
        out.append(table.render().split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))

        heading(1, "Composed screen" + (report.screen?.title.map { ": \($0)" } ?? ""))
        if let screen = report.screen {
            for composed in screen.sections { section(composed.rendered, from: shortID(composed.plugin)) }
            for diagnostic in screen.diagnostics {
                out.append("   " + Terminal.style("dropped", .yellow) + " \(diagnostic.keyPath ?? ""): \(diagnostic.message)")
            }
        } else {
            out.append("   (no --screen document given)")
        }

        heading(2, "Navigation through the router")
        for step in report.navigation {
            if let destination = step.destination {
                out.append("   → \(step.path)")
                section(destination)
            } else {
                out.append("   → \(step.path)  " + Terminal.style(step.error ?? "", .yellow))
            }
        }

        heading(3, "Events and validation: coupons → checkout")
        for step in report.events {
            out.append("   $ \(step.command.command)  →  \(step.command.output ?? step.command.error ?? "")")
            if let after = step.checkoutAfter, after != step.checkoutBefore {
                out.append("   checkout now shows:")
                section(after, from: "checkout")
            }
            if step.validation.passed {
                out.append("   validation " + Terminal.style("passed", .green) + " (\(step.validation.results.count) validator(s))")
            } else {
                out.append("   validation " + Terminal.style("failed", .red) + ":")
                for result in step.validation.results where !result.passed {
                    for issue in result.issues { out.append("     \(shortID(result.plugin)): \(issue.field): \(issue.message)") }
                }
            }
        }

        heading(4, "Storage (persists between runs)")
        for run in report.storage {
            out.append("   $ \(run.command)  →  \(run.output ?? Terminal.style(run.error ?? "", .yellow))")
        }

        heading(5, "Reload: checkout, and coupons, which requires it")
        if let reload = report.reload {
            for step in reload.plan { out.append("   plan: \(step)") }
            out.append("   " + (reload.result == "reloaded" ? Terminal.style("reloaded", .green) : Terminal.style(reload.result, .red))
                       + (reload.dependents.isEmpty ? "" : "; " + reload.dependents.joined(separator: ", ")))
            out.append("   $ \(reload.after.command)  →  \(reload.after.output ?? Terminal.style(reload.after.error ?? "", .yellow))")
        } else {
            out.append("   (the checkout plugin is not active)")
        }

        heading(6, "Routes")
        var routes = Table(header: ["PATTERN", "PLUGIN"])
        for route in report.routes { routes.rows.append([.init(text: route["pattern"] ?? ""), .init(text: route["plugin"] ?? "")]) }
        out.append(routes.render().split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))

        heading(7, "Host diagnostics")
        if report.diagnostics.isEmpty { out.append("   none") }
        // The same problem met twice (an event cycle on every publish) is one line.
        var seen: [String: Int] = [:]
        var order: [(String, HostDiagnostic)] = []
        for diagnostic in report.diagnostics {
            let text = "\(diagnostic)"
            if seen[text] == nil { order.append((text, diagnostic)) }
            seen[text, default: 0] += 1
        }
        for (text, diagnostic) in order {
            let style: Terminal.Style = diagnostic.severity == .error ? .red : .yellow
            let times = seen[text]! > 1 ? " (\(seen[text]!) times)" : ""
            out.append("   " + Terminal.style(diagnostic.severity.rawValue, style) + " \(text)\(times)")
        }
        let problems = report.plugins.filter { $0.error != nil }
        for record in problems {
            out.append("   " + Terminal.style(record.status.rawValue, RecordText.statusStyle(record.status)) + " \(record.error!.message) [\(record.code ?? "")]")
        }
        return out.joined(separator: "\n") + "\n"
    }

    private static func shortID(_ id: String) -> String {
        id.split(separator: ".").last.map(String.init) ?? id
    }
}
