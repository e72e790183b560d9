import DemoInterfaces
import Plugboard
import Testing
@testable import Coupons

@Suite struct CouponsTests {
    @Test func applyingACouponPublishesItAndValidationFlagsAnExpiredOne() throws {
        let harness = try PluginHarness(Coupons.self, id: "dev.plugboard.example.coupons")
        try harness.activate()
        let apply = try #require(harness.providers(of: Commands.self).first)
        #expect(try apply.run(arguments: ["EXPIRED20"]) == "applied EXPIRED20; delivered to 0 subscriber(s) (no checkout runs: it applies when one starts)")
        #expect(harness.published == ["coupon.applied"])
        #expect(harness.logged.map(\.message) == ["coupon EXPIRED20 applied"])
        let section = try #require(harness.providers(of: ScreenSections.self).first as? any Validating)
        #expect(section.validate().map(\.message) == ["EXPIRED20 has expired"])
    }

    struct CheckoutRefreshed: PluginEvent { static let name = "checkout.refreshed" }

    /// A fake of the checkout coupons optionally requires: it receives
    /// coupon.applied, as the real one does.
    final class FakeCheckout: Plugin {
        struct Applied: PluginEvent {
            static let name = "coupon.applied"
            let code: String
        }
        init(context: PluginContext) throws {
            try context.service(Services.Events.self).subscribe(Applied.self) { _ in }
        }
        func contributions() -> [Contribution] { [] }
    }

    @Test func withTheCheckoutRunningItDeliversToItAndHearsWhenItStops() throws {
        let harness = try PluginHarness(Coupons.self, requiring: ["dev.plugboard.example.checkout": FakeCheckout.self])
        try harness.activate()
        let apply = try #require(harness.providers(of: Commands.self).first)
        #expect(try apply.run(arguments: ["SAVE10"]) == "applied SAVE10; delivered to 1 subscriber(s)")
        harness.stopFake("dev.plugboard.example.checkout")
        #expect(try apply.run(arguments: ["SAVE10"]).hasSuffix("(no checkout runs: it applies when one starts)"))
    }

    @Test func withReapplyOnItRepublishesWhenTheCheckoutRefreshes() throws {
        let harness = try PluginHarness(Coupons.self, configuration: ["reapplyOnRefresh": .bool(true)])
        try harness.activate()
        _ = try harness.providers(of: Commands.self).first?.run(arguments: ["SAVE10"])
        harness.publish(CheckoutRefreshed())
        #expect(harness.published == ["coupon.applied", "coupon.applied"])
    }
}
