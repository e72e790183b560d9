import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import DemoInterfaces
import Plugboard
import PlugboardDemo
import PlugboardHost

/// What the demo did, step by step: the same facts for people and for `--json`.
struct DemoReport: Encodable {
    struct Navigation: Encodable {
        let path: String
        let destination: RenderedSection?
        let error: String?
        let code: String?
    }

    struct CommandRun: Encodable {
        let command: String
        let output: String?
        let error: String?
    }

    struct EventStep: Encodable {
        let command: CommandRun
        let checkoutBefore: RenderedSection?
        let checkoutAfter: RenderedSection?
        let validation: ValidationReport
    }

    /// A reload of the checkout, which coupons requires: its plan, what
    /// became of it and of coupons, and a coupon applied afterwards.
    struct ReloadStep: Encodable {
        let plugin: String
        let plan: [String]
        /// `reloaded`, or the error code.
        let result: String
        let dependents: [String]
        let after: CommandRun
    }

    let plugins: [PluginRecord]
    let screen: ComposedScreen?
    let navigation: [Navigation]
    let events: [EventStep]
    let storage: [CommandRun]
    let reload: ReloadStep?
    let routes: [[String: String]]
    let diagnostics: [HostDiagnostic]
}

/// The demo's steps, run against whatever plugins the host loaded: each step
/// degrades gracefully when the plugin it needs is missing or disabled.
struct DemoScript {
    let host: PluginHost
    let screen: Data?
    let screenSource: String

    func run(records: [PluginRecord]) -> DemoReport {
        let composed = screen.map { host.compose(screen: $0, source: screenSource) }
        let navigation = ["/restaurants/42", "/checkout", "/restaurants/999", "/nowhere"].map(navigate)
        // A coupon that fails validation, then one that passes; the checkout
        // section (another plugin) shows the discount after the event.
        let events = ["EXPIRED20", "SAVE10"].map { code -> DemoReport.EventStep in
            let before = checkoutSection()
            let command = runCommand("apply-coupon", [code])
            return DemoReport.EventStep(command: command, checkoutBefore: before, checkoutAfter: checkoutSection(), validation: host.validate())
        }
        let storage = [runCommand("place-order", []), runCommand("greet", ["demo"])]
        return DemoReport(
            plugins: records, screen: composed, navigation: navigation, events: events, storage: storage,
            reload: reloadCheckout(records),
            routes: host.routes.map { ["pattern": $0.pattern, "plugin": $0.plugin] },
            diagnostics: host.diagnostics)
    }

    static let checkoutID = "dev.plugboard.example.checkout"

    /// Reloads the checkout from its own file: coupons, which requires it,
    /// stops first and starts again on the new generation.
    private func reloadCheckout(_ records: [PluginRecord]) -> DemoReport.ReloadStep? {
        guard host.activePluginIDs.contains(Self.checkoutID),
              let file = records.first(where: { $0.id == Self.checkoutID })?.path else { return nil }
        var plan: [String] = []
        let outcome = host.reload(Self.checkoutID, from: file) { plan = $0.steps }
        return DemoReport.ReloadStep(
            plugin: Self.checkoutID, plan: plan, result: outcome.error?.code.rawValue ?? "reloaded",
            dependents: outcome.dependents.map { dependent in
                dependent.error.map { "\(dependent.pluginID) stopped [\($0.code.rawValue)]" } ?? "\(dependent.pluginID) gen \(dependent.generation)"
            },
            after: runCommand("apply-coupon", ["SAVE10"]))
    }

    private func navigate(_ path: String) -> DemoReport.Navigation {
        do {
            return .init(path: path, destination: try host.router.navigate(to: path, as: RenderedSection.self), error: nil, code: nil)
        } catch {
            return .init(path: path, destination: nil, error: error.description, code: error.code.rawValue)
        }
    }

    private func runCommand(_ name: String, _ arguments: [String]) -> DemoReport.CommandRun {
        let label = ([name] + arguments).joined(separator: " ")
        guard let command = host.registry.provider(of: Commands.self, where: { $0.name == name }) else {
            return .init(command: label, output: nil, error: "no active plugin provides '\(name)'")
        }
        do {
            return .init(command: label, output: try command.run(arguments: arguments), error: nil)
        } catch {
            return .init(command: label, output: nil, error: "\(error)")
        }
    }

    /// The checkout-summary section of the screen, rendered now.
    private func checkoutSection() -> RenderedSection? {
        guard let screen else { return nil }
        return host.compose(screen: screen, source: screenSource).sections.first { $0.type == "checkout-summary" }?.rendered
    }
}
