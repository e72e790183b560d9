import Plugboard
import PlugboardDev
import PlugboardHost
import Testing

/// Codes are a contract (the CLI's JSON, hosts' checks): each name keeps its
/// text. The other tests compare with the named codes; this pins the texts.
@Suite struct ErrorCodeTextTests {
    @Test(arguments: [
        (ServiceError.Code.serviceNotDeclared, "service-not-declared"),
        (.serviceDenied, "service-denied"),
        (.serviceUnavailable, "service-unavailable"),
        (.storageInvalidKey, "storage-invalid-key"),
        (.storageNotWritable, "storage-not-writable"),
        (.storageUnreadable, "storage-unreadable"),
        (.routeInvalidPattern, "route-invalid-pattern"),
        (.routeConflict, "route-conflict"),
        (.routeNotFound, "route-not-found"),
        (.routeHandlerFailed, "route-handler-failed"),
        (.routeDestinationType, "route-destination-type"),
        // The host's own codes.
        (.storageSymlink, "storage-symlink"),
        (.storageQuotaExceeded, "storage-quota-exceeded"),
        (.storageNotAFile, "storage-not-a-file"),
    ])
    func serviceErrorCodesKeepTheirText(_ code: ServiceError.Code, _ text: String) {
        #expect(code.rawValue == text)
        #expect(code == ServiceError.Code(text))
    }

    @Test func directoryAndDevLoopCodesKeepTheirText() {
        #expect(PluginDirectory.ScanError.Code.cannotOpen.rawValue == "plugins-directory-unreadable")
        #expect(PluginDirectory.ScanError.Code.notADirectory.rawValue == "plugins-directory-not-a-directory")
        #expect(PackageBuilder.Failure.Code.notAPackage.rawValue == "dev-not-a-package")
        #expect(PackageBuilder.Failure.Code.noDynamicLibrary.rawValue == "dev-no-dynamic-library")
        #expect(PackageBuilder.Failure.Code.swiftFailed.rawValue == "dev-swift-failed")
    }
}
