import EntryDataC
import FixtureSupport
import Plugboard

enum Name: FixtureName { static let name = "entry-data" }
/// Keeps a Swift type (and so Swift metadata) in the image.
public final class EntryDataPlugin: Plugin {
    public init(context: PluginContext) throws {}
    public func contributions() -> [Contribution] { [] }
}
