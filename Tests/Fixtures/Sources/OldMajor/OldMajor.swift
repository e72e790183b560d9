import OldMajorC
import Plugboard

/// A plugin as SDK 1.x built it: besides the old ABI marker (in its C half),
/// it references SDK API that 2.0 removed. `PluginExport.descriptor` compiled
/// 1.x's `PluginFactory` into every plugin; this names one of its symbols the
/// way such a plugin's undefined symbol table does.
@_silgen_name("$s9Plugboard13PluginFactoryC4make7contextAA0B0_pAA0B7ContextC_tKF")
func oldFactoryMake() -> Int

public final class OldMajor: Plugin {
    public init(context: PluginContext) throws { _ = oldFactoryMake() }
    public func contributions() -> [Contribution] { [] }
}
