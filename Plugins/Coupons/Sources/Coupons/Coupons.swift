import DemoInterfaces
import Plugboard
import Synchronization

/// Coupons: renders the `coupon` section, offers `apply-coupon CODE`, which
/// publishes `coupon.applied` for whoever cares (the checkout), and validates
/// the current coupon (an optional capability).
final class Coupons: Plugin {
    static let defaultConfiguration: [String: ConfigValue] = [
        // Re-publish coupon.applied whenever the checkout refreshes: a
        // deliberate cycle the host detects and stops (see the demo).
        "reapplyOnRefresh": .bool(false),
    ]

    /// Known codes: percent off, and whether still valid.
    static let codes: [String: (percentOff: Int, valid: Bool)] = ["SAVE10": (10, true), "EXPIRED20": (20, false)]

    let events: any EventBus
    let log: any PluginLogger
    let reapply: Bool
    let current = Mutex<String?>(nil)
    /// Whether the checkout (an optional requirement) runs: known when
    /// created, and told when it stops.
    let checkoutRuns: Mutex<Bool>

    static let checkoutID = "dev.plugboard.example.checkout"

    init(context: PluginContext) throws {
        events = try context.service(Services.Events.self)
        log = try context.service(Services.Logging.self)
        reapply = try context.service(Services.Configuration.self).bool("reapplyOnRefresh") ?? false
        checkoutRuns = Mutex(context.hasPlugin(Self.checkoutID))
    }

    func activate() throws {
        events.subscribe(PluginStopped.self) { [weak self] stopped in
            guard stopped.pluginID == Coupons.checkoutID else { return }
            self?.checkoutRuns.withLock { $0 = false }
        }
        events.subscribe(CheckoutRefreshed.self) { [weak self] _ in
            guard let self, self.reapply, let code = self.current.withLock({ $0 }) else { return }
            self.publish(code)
        }
    }

    func contributions() -> [Contribution] {
        [
            .provider(CouponSection(coupons: self), for: ScreenSections.self),
            .provider(ApplyCoupon(coupons: self), for: Commands.self),
        ]
    }

    @discardableResult
    func apply(_ code: String) -> EventDelivery {
        current.withLock { $0 = code }
        log.info("coupon \(code) applied")
        return publish(code)
    }

    @discardableResult
    private func publish(_ code: String) -> EventDelivery {
        events.publish(CouponApplied(code: code, percentOff: Self.codes[code]?.valid == true ? Self.codes[code]!.percentOff : 0))
    }
}

/// Published when a coupon is applied. Checkout declares its own copy of
/// this shape: plugins never import each other.
struct CouponApplied: PluginEvent {
    static let name = "coupon.applied"
    let code: String
    let percentOff: Int
}

struct CheckoutRefreshed: PluginEvent {
    static let name = "checkout.refreshed"
}

/// The `coupon` section; also validates the applied coupon.
struct CouponSection: SectionRenderer, Validating {
    let coupons: Coupons
    let sectionTypes = ["coupon"]

    func render(type: String, json: [UInt8]) throws -> RenderedSection {
        let code = coupons.current.withLock { $0 }
        return RenderedSection(title: "Coupon", lines: [code.map { "Applied: \($0)" } ?? "No coupon applied"])
    }

    func validate() -> [ValidationIssue] {
        guard let code = coupons.current.withLock({ $0 }) else { return [] }
        guard let known = Coupons.codes[code] else {
            return [ValidationIssue(field: "coupon.code", message: "\(code) is not a known coupon")]
        }
        return known.valid ? [] : [ValidationIssue(field: "coupon.code", message: "\(code) has expired")]
    }
}

/// `apply-coupon CODE`
struct ApplyCoupon: Command {
    let coupons: Coupons
    let name = "apply-coupon"
    let summary = "Apply a coupon code (publishes coupon.applied)"

    func run(arguments: [String]) throws -> String {
        guard let code = arguments.first else { return "usage: apply-coupon CODE" }
        let delivery = coupons.apply(code)
        let checkout = coupons.checkoutRuns.withLock { $0 } ? "" : " (no checkout runs: it applies when one starts)"
        return "applied \(code); delivered to \(delivery.delivered) subscriber(s)\(checkout)"
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Coupons.self, id: "dev.plugboard.example.coupons", version: "1.0.0",
        provides: [ScreenSections.interface, Commands.interface],
        services: [Services.Events.id, Services.Logging.id, Services.Configuration.id],
        // Builds on checkout when it is there (it reacts to checkout's
        // events): activated after it; runs without it.
        requires: [.plugin("dev.plugboard.example.checkout", "1.0.0", optional: true)])
}
