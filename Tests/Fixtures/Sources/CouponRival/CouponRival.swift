import DemoInterfaces
import Plugboard
import FixtureSupport

// Renders the section type "coupon", which the Coupons example renders too:
// the host keeps the first by plugin id and reports the conflict.
final class CouponRival: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(RivalSection(), for: ScreenSections.self)] }
}

struct RivalSection: SectionRenderer {
    let sectionTypes = ["coupon"]
    func render(type: String, json: [UInt8]) throws -> RenderedSection { RenderedSection(title: "rival", lines: []) }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(for: CouponRival.self, id: "zz.fixture.coupon-rival", version: "1.0.0", provides: [ScreenSections.interface])
}
