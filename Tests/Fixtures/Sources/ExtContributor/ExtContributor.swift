import DemoInterfaces
import FixtureSupport
import Plugboard

/// Provides to the point fixture.ext.publisher publishes, and requires it.
final class ExtContributor: Plugin {
    init(context: PluginContext) throws {}
    func contributions() -> [Contribution] { [.provider(Renderer(), for: ScreenSections.self)] }

    struct Renderer: SectionRenderer {
        var sectionTypes: [String] { ["from-contributor"] }
        func render(type: String, json: [UInt8]) throws -> RenderedSection { RenderedSection(title: "contributor", lines: []) }
    }
}

@_cdecl("plugboard_entry")
public func plugboardEntry() -> UnsafeRawPointer {
    PluginExport.descriptor(
        for: ExtContributor.self, id: "fixture.ext.contributor", version: "1.0.0", provides: [ScreenSections.interface],
        requires: [.plugin("fixture.ext.publisher", "1.0.0")])
}
