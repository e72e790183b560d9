import DemoInterfaces
import Plugboard

/// Restaurant pages: renders the `restaurant-header` and `menu` sections of a
/// screen, and handles `/restaurants/{id}` in the router.
final class Restaurants: Plugin {
    static let defaultConfiguration: [String: ConfigValue] = ["currency": .string("EUR")]

    let currency: String
    let router: any Router

    init(context: PluginContext) throws {
        currency = try context.service(Services.Configuration.self).string("currency") ?? "EUR"
        router = try context.service(Services.Router.self)
    }

    func activate() throws {
        try router.register("/restaurants/{id}") { [currency] match in
            let id = match.parameter("id") ?? ""
            guard let restaurant = Catalog.restaurants[id] else {
                return RenderedSection(title: "Restaurant \(id)", lines: ["No restaurant with id \(id)."])
            }
            return RenderedSection(title: restaurant.name, lines: [
                "\(restaurant.cuisine), rated \(restaurant.rating)/5",
                "Menu: " + restaurant.menu.map { "\($0.name) \(Money.format($0.price, currency))" }.joined(separator: ", "),
            ])
        }
    }

    func contributions() -> [Contribution] {
        [.provider(RestaurantSections(currency: currency), for: ScreenSections.self)]
    }
}

/// Each section decodes its own slice of the screen document.
struct RestaurantSections: SectionRenderer {
    let currency: String
    let sectionTypes = ["restaurant-header", "menu"]

    struct Header: Decodable { let name: String; let cuisine: String; let rating: Double }
    struct Menu: Decodable { let items: [Catalog.Dish] }

    func render(type: String, json: [UInt8]) throws -> RenderedSection {
        switch type {
        case "restaurant-header":
            let header = try decode(Header.self, from: json)
            return RenderedSection(title: header.name, lines: ["\(header.cuisine) · ★ \(header.rating)"])
        default:
            let menu = try decode(Menu.self, from: json)
            return RenderedSection(title: "Menu", lines: menu.items.map { "\($0.name)  \(Money.format($0.price, currency))" })
        }
    }
}

enum Catalog {
    struct Dish: Decodable { let name: String; let price: Double }
    struct Restaurant { let name: String; let cuisine: String; let rating: Double; let menu: [Dish] }

    static let restaurants: [String: Restaurant] = [
        "42": Restaurant(name: "Chez Plugboard", cuisine: "Bistro", rating: 4.6,
                         menu: [Dish(name: "Onion soup", price: 8.5), Dish(name: "Steak frites", price: 21)]),
        "7": Restaurant(name: "Dynamic Noodles", cuisine: "Ramen", rating: 4.3,
                        menu: [Dish(name: "Shoyu ramen", price: 14)]),
    ]
}

enum Money {
    static func format(_ amount: Double, _ currency: String) -> String {
        let cents = Int((amount * 100).rounded())
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction) \(currency)"
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: Restaurants.self, id: "dev.plugboard.example.restaurants", version: "1.0.0",
        provides: [ScreenSections.interface],
        services: [Services.Configuration.id, Services.Router.id])
}
