@testable import CoverdCache
@testable import CoverdImages
@testable import CoverdModel
@testable import CoverdSync
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The look at the disk the first scan puts off: batches, verdicts, cancellation, and the daemon's parts.
@Suite("Cached covers checked after the first scan")
struct CachedCoverCheckTests {
    /// A cache with a small valid PNG for each of `ids`, and the files over it.
    func files(covering ids: [String], in directory: TestDirectory) throws -> DiskCoverFiles {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        for (number, id) in ids.enumerated() {
            let temporary = try store.writeTemporary(PNGFixture.make(width: 2 + number % 5, height: 2), for: AlbumID(trusted: id), flush: false)
            _ = try store.commit(temporary, as: AlbumID(trusted: id))
        }
        return DiskCoverFiles(store: store, directorySync: DirectorySync(path: store.directory), limits: ImageLimits(), maxBytes: 1 << 20,
            inflateMemory: InflateMemory())
    }

    /// What a check handed over.
    final class Seen: Sendable {
        let looked = Mutex<[([AlbumID], [FileStamp?])]>([])
        let settled = Mutex<[([AlbumID], [CoverVerdict])]>([])
        let totals = Mutex<(compared: Int, lost: Int)?>(nil)
    }

    /// Steps that record everything, and require `settle` and `finished` to run on `target`:
    /// `pick` chooses the ids to read, `onSettle` runs in each settle.
    func steps(
        _ seen: Seen, on target: DispatchQueue, pick: @escaping @Sendable (AlbumID, FileStamp?) -> Bool,
        onSettle: @escaping @Sendable () -> Void = {}
    ) -> CachedCoverCheck.Steps {
        CachedCoverCheck.Steps(
            differing: { ids, found in
                seen.looked.withLock { $0.append((ids, found)) }
                return (zip(ids, found).filter { pick($0.0, $0.1) }.map(\.0), ids.count)
            },
            settle: { ids, verdicts in
                dispatchPrecondition(condition: .onQueue(target))
                seen.settled.withLock { $0.append((ids, verdicts)) }
                onSettle()
                return verdicts.filter { if case .valid = $0.check { false } else { true } }.count
            },
            finished: { compared, lost, _ in
                dispatchPrecondition(condition: .onQueue(target))
                seen.totals.withLock { $0 = (compared, lost) }
            })
    }

    @Test("Given 2,501 covers, some deleted and some corrupt, when checked, then every batch carries the disk's stamps in order, only the picked covers are read, and the totals come last")
    func batchesLookAndRead() throws {
        // Given: every third cover deleted, covers 1 and 2000 overwritten with junk; three batches, the last partial
        let directory = TestDirectory()
        let names = (0...2500).map { String(format: "a%04d", $0) }
        let files = try files(covering: names, in: directory)
        let ids = names.map { AlbumID(trusted: $0) }
        for (number, id) in ids.enumerated() where number % 3 == 0 { files.remove(id) }
        for id in [ids[1], ids[2000]] { try writeAtomically("junk", to: files.path(for: id)) }
        let seen = Seen()

        // When: the missing ones, the junk and cover 4 (valid) are picked for reading
        let picked: Set<AlbumID> = [ids[1], ids[2000], ids[4]]
        let target = DispatchQueue(label: "test.target")
        CachedCoverCheck().start(
            ids, in: files, target: target, steps: steps(seen, on: target, pick: { id, stamp in stamp == nil || picked.contains(id) }))
        try waitUntil("the totals") { seen.totals.withLock { $0 != nil } }

        // Then
        let looked = seen.looked.withLock { $0 }
        #expect(looked.map(\.0.count) == [1024, 1024, 453])
        #expect(looked.flatMap(\.0) == ids)
        #expect(looked.flatMap(\.1) == ids.map { files.store.stamp(for: $0) })
        let settled = seen.settled.withLock { $0 }
        let verdicts = Dictionary(uniqueKeysWithValues: zip(settled.flatMap(\.0), settled.flatMap(\.1)))
        #expect(verdicts.count == 834 + 3)
        #expect(verdicts[ids[0]] == CoverVerdict(.missing, stamp: nil))
        let stamp4 = try #require(files.store.stamp(for: ids[4]))
        #expect(verdicts[ids[4]] == CoverVerdict(.valid(stamp4), stamp: stamp4))
        for id in [ids[1], ids[2000]] {
            guard let verdict = verdicts[id], case .invalid = verdict.check, verdict.stamp == files.store.stamp(for: id) else {
                Issue.record("\(id): \(String(describing: verdicts[id]))")
                continue
            }
        }
        let totals = try #require(seen.totals.withLock { $0 })
        #expect(totals.compared == 2501)
        #expect(totals.lost == 836)
    }

    @Test("Given a stop between a batch's lookup and its decision, when the check goes on, then nothing is decided and no totals are reported")
    func stopBeforeADecision() throws {
        // Given: the stop comes while the first batch is compared
        let directory = TestDirectory()
        let files = try files(covering: ["a", "b"], in: directory)
        let check = CachedCoverCheck()
        let target = DispatchQueue(label: "test.target")
        let seen = Seen()
        var stopping = steps(seen, on: target, pick: { _, _ in true })
        let compare = stopping.differing
        stopping.differing = { ids, found in
            check.cancel()
            return compare(ids, found)
        }

        // When
        check.start([AlbumID(trusted: "a"), AlbumID(trusted: "b")], in: files, target: target, steps: stopping)
        check.waitUntilIdle()
        target.sync {}

        // Then
        #expect(seen.looked.withLock { $0.count } == 1)
        #expect(seen.settled.withLock { $0.isEmpty })
        #expect(seen.totals.withLock { $0 == nil })
    }

    @Test("Given a stop right after the last decision, when the check ends, then no totals are reported")
    func stopAfterTheLastDecision() throws {
        // Given
        let directory = TestDirectory()
        let files = try files(covering: ["a"], in: directory)
        let check = CachedCoverCheck()
        let target = DispatchQueue(label: "test.target")
        let seen = Seen()

        // When: the settle step stops the check, as a stop on the target queue would right after it
        check.start([AlbumID(trusted: "a")], in: files, target: target, steps: steps(seen, on: target, pick: { _, _ in true }, onSettle: { check.cancel() }))
        check.waitUntilIdle()
        target.sync {}

        // Then
        #expect(seen.settled.withLock { $0.count } == 1)
        #expect(seen.totals.withLock { $0 == nil })
    }

    @Test("Given a valid cover beyond lowered image limits and a junk one, when inspected, then the first is unusable (kept) and the junk invalid, each with its stamp")
    func inspectTellsLimitsFromCorruption() throws {
        // Given: 6×2 and 2×2 covers; the limits lowered to 4 pixels a side afterwards
        let directory = TestDirectory()
        var files = try files(covering: ["wide", "junk"], in: directory)
        files = DiskCoverFiles(
            store: files.store, directorySync: files.directorySync, limits: { var limits = ImageLimits(); limits.maxSide = 4; return limits }(),
            maxBytes: files.maxBytes, inflateMemory: files.inflateMemory)
        let wide = AlbumID(trusted: "wide"), junk = AlbumID(trusted: "junk")
        let png = PNGFixture.make(width: 6, height: 2)
        try writeAtomically(png, to: files.path(for: wide))
        try writeAtomically("junk", to: files.path(for: junk))

        // When
        let verdicts = [wide, junk].map(files.inspect)

        // Then
        guard case .unusable(let why) = verdicts[0].check else { Issue.record("\(verdicts[0])"); return }
        #expect(why.hasPrefix("beyond the image limits: image is too large (6×2"))
        guard case .invalid = verdicts[1].check else { Issue.record("\(verdicts[1])"); return }
        #expect(verdicts.map(\.stamp) == [files.store.stamp(for: wide), files.store.stamp(for: junk)])
        #expect(verdicts.allSatisfy { $0.stamp != nil })
    }

    @Test("Given no album to check, when started, then nothing is looked up or reported")
    func nothingToCheck() throws {
        // Given
        let directory = TestDirectory()
        let check = CachedCoverCheck()
        let target = DispatchQueue(label: "test.target")
        let seen = Seen()
        // When
        check.start([], in: try files(covering: [], in: directory), target: target, steps: steps(seen, on: target, pick: { _, _ in true }))
        check.waitUntilIdle()
        target.sync {}
        // Then
        #expect(seen.looked.withLock { $0.isEmpty })
        #expect(seen.totals.withLock { $0 == nil })
    }
}
