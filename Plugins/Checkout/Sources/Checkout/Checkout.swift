import DemoInterfaces
import Plugboard
import Synchronization

/// Checkout: renders the `checkout-summary` section with the discount of the
/// last `coupon.applied` event, validates the cart, handles `/checkout`, and
/// counts placed orders in storage (they survive restarts).
final class Checkout: Plugin {
    struct Cart: Sendable {
        var items: [Item] = []
        var percentOff = 0
        var coupon: String?
    }

    struct Item: Codable, Sendable {
        let name: String
        let price: Double
        let quantity: Int
    }

    let events: any EventBus
    let storage: any KeyValueStore
    let router: any Router
    let cart = Mutex(Cart())

    init(context: PluginContext) throws {
        events = try context.service(Services.Events.self)
        storage = try context.service(Services.Storage.self)
        router = try context.service(Services.Router.self)
    }

    func activate() throws {
        // The event comes from the coupons plugin, which we never import.
        events.subscribe(CouponApplied.self) { [weak self] event in
            guard let self else { return }
            self.cart.withLock { $0.percentOff = event.percentOff; $0.coupon = event.code }
            self.events.publish(CheckoutRefreshed())
        }
        try router.register("/checkout") { [weak self] _ in
            RenderedSection(title: "Checkout", lines: self?.summaryLines() ?? [])
        }
    }

    func contributions() -> [Contribution] {
        [
            .provider(CheckoutSection(checkout: self), for: ScreenSections.self),
            .provider(PlaceOrder(checkout: self), for: Commands.self),
        ]
    }

    func summaryLines() -> [String] {
        let cart = cart.withLock { $0 }
        let subtotal = cart.items.reduce(0) { $0 + $1.price * Double($1.quantity) }
        let discount = subtotal * Double(cart.percentOff) / 100
        var lines = cart.items.map { "\($0.quantity) × \($0.name)  \(format($0.price * Double($0.quantity)))" }
        lines.append("Subtotal  \(format(subtotal))")
        if cart.percentOff > 0 { lines.append("Coupon \(cart.coupon ?? "") −\(cart.percentOff)%  −\(format(discount))") }
        lines.append("Total  \(format(subtotal - discount))")
        return lines
    }

    func placeOrder() throws -> Int {
        let orders = (Int(try storage.string(for: "orders") ?? "") ?? 0) + 1
        try storage.set(String(orders), for: "orders")
        return orders
    }

    private func format(_ amount: Double) -> String {
        let cents = Int((amount * 100).rounded())
        return "\(cents / 100).\(cents % 100 < 10 ? "0" : "")\(cents % 100)"
    }
}

/// Checkout's own view of the coupons plugin's event (same name and shape).
struct CouponApplied: PluginEvent {
    static let name = "coupon.applied"
    let code: String
    let percentOff: Int
}

struct CheckoutRefreshed: PluginEvent {
    static let name = "checkout.refreshed"
}

/// The `checkout-summary` section; also validates the cart.
struct CheckoutSection: SectionRenderer, Validating {
    let checkout: Checkout
    let sectionTypes = ["checkout-summary"]

    struct Payload: Decodable { let items: [Checkout.Item] }

    func render(type: String, json: [UInt8]) throws -> RenderedSection {
        let payload = try decode(Payload.self, from: json)
        checkout.cart.withLock { $0.items = payload.items }
        return RenderedSection(title: "Order summary", lines: checkout.summaryLines())
    }

    func validate() -> [ValidationIssue] {
        let items = checkout.cart.withLock { $0.items }
        var issues: [ValidationIssue] = []
        if items.isEmpty { issues.append(ValidationIssue(field: "cart.items", message: "the cart is empty")) }
        for item in items where item.quantity <= 0 {
            issues.append(ValidationIssue(field: "cart.items.\(item.name)", message: "quantity must be positive"))
        }
        return issues
    }
}

/// `place-order`
struct PlaceOrder: Command {
    let checkout: Checkout
    let name = "place-order"
    let summary = "Place the order (counted in storage across runs)"

    func run(arguments: [String]) throws -> String {
        "order #\(try checkout.placeOrder()) placed"
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Checkout.self, id: "dev.plugboard.example.checkout", version: "1.0.0",
        provides: [ScreenSections.interface, Commands.interface],
        services: [Services.Events.id, Services.Storage.id, Services.Router.id])
}
