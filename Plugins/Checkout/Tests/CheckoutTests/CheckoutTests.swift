import DemoInterfaces
import Plugboard
import Testing
@testable import Checkout

@Suite struct CheckoutTests {
    /// The coupons plugin's event, as this test's own type: only the name and shape matter.
    struct CouponApplied: PluginEvent {
        static let name = "coupon.applied"
        let code: String
        let percentOff: Int
    }

    @Test func aCouponFromAnotherPluginShowsOnTheCheckoutRoute() throws {
        let harness = try PluginHarness(Checkout.self, id: "dev.plugboard.example.checkout")
        try harness.activate()
        #expect(harness.routes == ["/checkout"])
        let delivery = harness.publish(CouponApplied(code: "SAVE10", percentOff: 10))
        #expect(delivery.delivered == 1)
        #expect(harness.published == ["checkout.refreshed"])
        let page = try #require(try harness.navigate(to: "/checkout") as? RenderedSection)
        #expect(page.lines.contains { $0.hasPrefix("Coupon SAVE10 −10%") }, "\(page.lines)")
    }

    @Test func placingOrdersCountsThemInStorage() throws {
        let harness = try PluginHarness(Checkout.self, storage: ["orders": Array("4".utf8)])
        let place = try #require(harness.providers(of: Commands.self).first { $0.name == "place-order" })
        _ = try place.run(arguments: [])
        #expect(harness.stored["orders"] == Array("5".utf8))
    }
}
