// One import for host authors: `import PlugboardHost` brings every part's
// public types (as swift-nio's `NIO` re-exports `NIOCore`). The parts are
// modules of their own so that the compiler, not a document, keeps them
// one-way (docs/ARCHITECTURE.md, "Modules").
@_exported import PlugboardCore
@_exported import PlugboardAdmission
@_exported import PlugboardRegistry
@_exported import PlugboardServices
@_exported import PlugboardLoading
@_exported import PlugboardCatalog
@_exported import PlugboardIsolation
@_exported import PlugboardLifecycle
