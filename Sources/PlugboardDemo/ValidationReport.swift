import DemoInterfaces
import Plugboard
import PlugboardHost

/// The aggregated result of every provider that adopts ``Validating``.
public struct ValidationReport: Sendable, Encodable {
    public struct Result: Sendable, Encodable {
        public let plugin: String
        public let interface: String
        public let issues: [ValidationIssue]
        public var passed: Bool { issues.isEmpty }
    }

    /// One per adopting provider, ordered by interface then plugin id.
    public let results: [Result]
    public var passed: Bool { results.allSatisfy(\.passed) }
    public var issues: [ValidationIssue] { results.flatMap(\.issues) }
}

extension PluginHost {
    /// Runs ``Validating/validate()`` on every registered provider that
    /// adopts it, across all extension points; others are skipped.
    public func validate() -> ValidationReport {
        var results: [ValidationReport.Result] = []
        for interface in registry.declaredInterfaces.map(\.id).sorted() {
            for registration in registry.registrations(for: interface) {
                guard let validating = registration.provider as? any Validating else { continue }
                results.append(.init(plugin: registration.pluginID, interface: interface, issues: validating.validate()))
            }
        }
        return ValidationReport(results: results)
    }
}
