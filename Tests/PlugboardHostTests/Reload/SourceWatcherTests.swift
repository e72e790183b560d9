import Foundation
import PlugboardDev
import PlugboardHost
import Testing

/// The dev loop's watcher, inotify and polling, on real files.
@Suite struct SourceWatcherTests {
    /// Waits for the next change on a background thread while `act` runs.
    func change(_ watcher: SourceWatcher, after act: () throws -> Void) rethrows -> SourceWatcher.Change? {
        final class Box: @unchecked Sendable {
            // @unchecked: written by the watcher thread before `done` is signalled, read after.
            var change: SourceWatcher.Change?
        }
        let box = Box(), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.change = watcher.waitForChange()
            done.signal()
        }
        // No wait needed: the watcher took its state when it was made (its
        // inotify watches, or its polling snapshot), so a change made before
        // waitForChange runs still counts.
        try act()
        if done.wait(timeout: .now() + 10) == .timedOut {
            watcher.stop()
            done.wait()
        }
        return box.change
    }

    func package() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory("plugboard-watch")
        try FileManager.default.createDirectory(atPath: dir.file("Sources/Plugin"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file(".build/debug"), withIntermediateDirectories: true)
        try dir.write(Data("let a = 1\n".utf8), as: "Sources/Plugin/Plugin.swift")
        return dir
    }

    /// An editor save: write a hidden temporary file in several chunks, rename it
    /// over the source, touch it again.
    func editorSave(_ dir: TemporaryDirectory) throws {
        let temporary = dir.file("Sources/Plugin/.Plugin.swift.swp")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file("Sources/Plugin/Plugin.swift")))
        try handle.close()
        _ = FileManager.default.createFile(atPath: temporary, contents: Data("let a = ".utf8))
        let writer = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
        try writer.seekToEnd()
        try writer.write(contentsOf: Data("2\n".utf8))
        try writer.close()
        _ = rename(temporary, dir.file("Sources/Plugin/Plugin.swift"))
        _ = FileManager.default.createFile(atPath: dir.file("Sources/Plugin/Plugin.swift~"), contents: Data())
    }

    @Test(arguments: [false, true])
    func oneEditorSaveIsOneChange(polling: Bool) throws {
        let dir = try package()
        // With inotify a change is reported once its file is complete,
        // without waiting for quiet: an hour of quiet would make `change`
        // give up (nil) if it waited. Polling has only quiet to go by.
        let watcher = SourceWatcher(root: dir.path, quiet: polling ? 0.15 : 3600, polling: polling)
        #expect(watcher.mode == (polling ? "polling" : "inotify"))
        let first = try change(watcher) { try editorSave(dir) }
        #expect(first?.paths == ["Sources/Plugin/Plugin.swift"])
        if polling {
            // Reported only once the quiet period after the last event has
            // passed: a lower bound, which a slow machine only makes longer.
            #expect((first?.detectMilliseconds ?? 0) >= watcher.quiet * 1000)
        }
        // Nothing else is pending from that save: the next change is the next edit.
        let second = try change(watcher) { try dir.write(Data("let b = 3\n".utf8), as: "Sources/Plugin/Other.swift") }
        #expect(second?.paths == ["Sources/Plugin/Other.swift"])
    }

    /// What `plugboard dev` asks after a build: was anything saved meanwhile?
    @Test func aSaveWhileBuildingIsPendingAndAWriteInProgressIsNot() throws {
        let dir = try package()
        let watcher = SourceWatcher(root: dir.path)
        #expect(watcher.pendingChange() == nil)
        // A file opened and written, not closed yet: not a change to build.
        let writer = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file("Sources/Plugin/Plugin.swift")))
        try writer.write(contentsOf: Data("let a = 5\n".utf8))
        #expect(watcher.pendingChange() == nil)
        try writer.close()
        #expect(watcher.pendingChange()?.paths == ["Sources/Plugin/Plugin.swift"])
        // Taken once: nothing is pending after it.
        #expect(watcher.pendingChange() == nil)
        // `sed -i`: a temporary file written and closed, then renamed over the source.
        try dir.write(Data("let a = 6\n".utf8), as: "Sources/Plugin/sedXYZ")
        #expect(rename(dir.file("Sources/Plugin/sedXYZ"), dir.file("Sources/Plugin/Plugin.swift")) == 0)
        #expect(watcher.pendingChange()?.paths == ["Sources/Plugin/Plugin.swift"])
    }

    /// A process forked while the editor wrote its temporary file holds a
    /// copy of that descriptor, and closes it when it ends, after the rename:
    /// inotify then says the saved file was closed after writing. Neither
    /// that nor an open for writing closed without a write is a change.
    @Test func aCloseWithoutAWriteIsNotAChange() throws {
        let dir = try package()
        let watcher = SourceWatcher(root: dir.path)
        let temporary = dir.file("Sources/Plugin/.Plugin.swift.tmp")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        #expect(write(fd, "let a = 7\n", 10) == 10)
        // The forked process's copy.
        let copy = dup(fd)
        close(fd)
        #expect(rename(temporary, dir.file("Sources/Plugin/Plugin.swift")) == 0)
        #expect(watcher.pendingChange()?.paths == ["Sources/Plugin/Plugin.swift"])
        close(copy)
        #expect(watcher.pendingChange() == nil, "the late close of the saved file's descriptor was taken as a save")
        let opened = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file("Sources/Plugin/Plugin.swift")))
        try opened.close()
        #expect(watcher.pendingChange() == nil, "an open for writing, closed without a write, was taken as a save")
        // A write is still one.
        try dir.write(Data("let a = 8\n".utf8), as: "Sources/Plugin/Plugin.swift")
        #expect(watcher.pendingChange()?.paths == ["Sources/Plugin/Plugin.swift"])
    }

    @Test(arguments: [false, true])
    func buildOutputIsNotAChange(polling: Bool) throws {
        let dir = try package()
        let watcher = SourceWatcher(root: dir.path, quiet: 0.1, polling: polling)
        let seen = try change(watcher) {
            // Both within one quiet period: a build output counted as a change
            // would show in the same set of paths.
            try dir.write(Data("object".utf8), as: ".build/debug/Plugin.o")
            try dir.write(Data("let c = 4\n".utf8), as: "Sources/Plugin/Plugin.swift")
        }
        #expect(seen?.paths == ["Sources/Plugin/Plugin.swift"])
    }

    @Test func aNewDirectoryIsWatchedToo() throws {
        let dir = try package()
        let watcher = SourceWatcher(root: dir.path)
        // The file may land before the new directory is watched: it still counts.
        let seen = try change(watcher) {
            try FileManager.default.createDirectory(atPath: dir.file("Sources/Plugin/Sub"), withIntermediateDirectories: false)
            try dir.write(Data("let d = 5\n".utf8), as: "Sources/Plugin/Sub/New.swift")
        }
        #expect(seen?.paths.contains("Sources/Plugin/Sub/New.swift") == true, "\(seen?.paths ?? [])")
        // And later saves inside it are seen through its own watch.
        let later = try change(watcher) { try dir.write(Data("let e = 6\n".utf8), as: "Sources/Plugin/Sub/New.swift") }
        // (Contains, not equals: the watcher takes a change 10 ms after a file
        // is complete, so on a loaded machine events of the first step can
        // arrive with this one.)
        #expect(later?.paths.contains("Sources/Plugin/Sub/New.swift") == true, "\(later?.paths ?? [])")
    }
}
