import DemoInterfaces
import Plugboard
import Testing
@testable import Restaurants

@Suite struct RestaurantsTests {
    @Test func aRestaurantPageIsRoutedByIDInTheConfiguredCurrency() throws {
        let harness = try PluginHarness(Restaurants.self, configuration: ["currency": .string("USD")])
        try harness.activate()
        #expect(harness.routes == ["/restaurants/{id}"])
        let page = try #require(try harness.navigate(to: "/restaurants/42") as? RenderedSection)
        #expect(page.title == "Chez Plugboard")
        #expect(page.lines.last?.contains("USD") == true, "\(page.lines)")
        let missing = try #require(try harness.navigate(to: "/restaurants/9") as? RenderedSection)
        #expect(missing.lines == ["No restaurant with id 9."])
    }

    @Test func eachSectionDecodesItsOwnSlice() throws {
        let harness = try PluginHarness(Restaurants.self)
        let sections = try #require(harness.providers(of: ScreenSections.self).first)
        let header = try sections.render(type: "restaurant-header", json: Array(#"{"name":"X","cuisine":"Y","rating":4}"#.utf8))
        #expect(header.title == "X")
        #expect(throws: (any Error).self) { try sections.render(type: "menu", json: Array(#"{"items":[{"name":"A","price":"free"}]}"#.utf8)) }
    }
}
