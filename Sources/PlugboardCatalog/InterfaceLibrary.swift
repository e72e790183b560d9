import PlugboardCore

/// An interface library of a plugins directory's `lib/` folder, as admitted.
package struct InterfaceLibrary: Sendable {
    package let path: String
    /// Its SHA-256, when admitted with one computed (a lock file, `plugboard lock`).
    package let sha256: String?
    /// Why it was refused.
    package let error: PluginLoadError?
}

extension Catalog {
    /// Admits the interface libraries of `directory`'s `lib/` folder like
    /// plugins (trust, one read, ELF checks, lock entry) and puts their copies
    /// beside the private copies plugins are loaded from (here and in
    /// scanners), so a plugin of a host's own extension point finds the
    /// library it needs even in a host that does not link it (the
    /// `plugboard` tool). A library installed by an earlier discovery stays.
    package func installInterfaceLibraries(from directory: String) -> [InterfaceLibrary] {
        installInterfaceLibraries(PluginDirectory.interfaceLibraries(in: directory))
    }

    /// Admits and installs the interface libraries at `paths` (see above).
    package func installInterfaceLibraries(_ paths: [String]) -> [InterfaceLibrary] {
        var ownership = OwnershipCheck()
        let installed = paths.map { library -> InterfaceLibrary in
            // Installed by an earlier discovery of this host: its image may be mapped already.
            if let earlier = facts.withLock({ $0.interfaceLibraries.first { $0.path == library && $0.error == nil } }) {
                return earlier
            }
            switch admission.admit(PluginDirectory.candidate(at: library), as: .interfaceLibrary, ownership: &ownership) {
            case let .success(image):
                return InterfaceLibrary(path: library, sha256: image.sha256, error: nil)
            case let .failure(refusal):
                services.report(HostDiagnostic(.error, code: .init(refusal.error.code.rawValue),
                    message: "\(library): interface library refused: \(refusal.error.reason); plugins that need it will fail to load"))
                return InterfaceLibrary(path: library, sha256: nil, error: refusal.error)
            }
        }
        facts.withLock { facts in
            for library in installed {
                facts.interfaceLibraries.removeAll { $0.path == library.path }
                facts.interfaceLibraries.append(library)
            }
        }
        return installed
    }
}

extension Catalog {
    /// The interface libraries among examined files: in a build folder
    /// (`.build/debug`) a plugin of a host's own point lies beside the
    /// library of that point. A file refused for having no entry point
    /// (`no-entry-symbol`) that another file of its folder needs (its ELF
    /// `NEEDED` entries) is that library, not a rejected plugin. Their paths.
    package func siblingInterfaceLibraries(_ examined: [Examined]) -> [String] {
        // Most discoveries have no such file: nothing else is looked at then.
        let noEntry = PluginLoadError.Code.noEntrySymbol.rawValue
        let libraries = examined.filter { $0.record.code == noEntry }.map(\.record.path)
        guard !libraries.isEmpty else { return [] }
        return libraries.filter { library in
            let folder = OwnershipCheck.parent(of: library), name = library.dropFirst(folder.count + 1)
            // Needed by a plugin (available, or failing to load for want of
            // it): a refused file's needs make nothing an interface library.
            let loadFailed = PluginLoadError.Code.loadFailed.rawValue
            return examined.contains { item in
                item.record.path != library && (item.available != nil || item.record.code == loadFailed)
                    && OwnershipCheck.parent(of: item.record.path) == folder
                    && item.record.file?.needed.contains { $0 == name } == true
            }
        }
    }
}
