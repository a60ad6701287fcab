import Foundation
import CoverdBase
import CoverdCache
import CoverdImages
import CoverdModel

/// One cover that failed verification.
public struct VerifyProblem: Sendable, Equatable {
    public var path: String
    public var reason: String
}

/// What `coverd verify` found.
public struct VerifyReport: Sendable {
    public var checked = 0
    public var problems: [VerifyProblem] = []
    /// Index rows marked failed so that the daemon fetches them again on its next reload.
    public var marked = 0
    /// Why bad covers could not be marked (a full disk, a read-only cache).
    public var markingFailure: IndexError?
    /// Why the index could not be read at all: every file was checked, but
    /// not whether each album it lists as cached has its file.
    public var indexFailure: IndexError?
    /// Bad covers that have a row in the index: those a reload would fetch again once marked.
    public var markable = 0
}

/// Checks every PNG under `covers/` with the full validator (CRCs included)
/// and every cached album's file for presence. Corrupt or missing covers are
/// marked `failed` in the index; the daemon refetches them on reload. When
/// the index cannot be written (a full disk, a read-only cache), it is read
/// instead, every cover is still checked, and the report says why nothing
/// was marked: verifying needs no room.
public struct CoverVerifier: Sendable {
    public var limits: ImageLimits
    public var maxBytes: Int

    public init(limits: ImageLimits, maxBytes: Int) {
        self.limits = limits
        self.maxBytes = maxBytes
    }

    public func verify(cacheDirectory: String) -> VerifyReport {
        let store = CoverStore(cacheDirectory: cacheDirectory)
        let indexPath = join(cacheDirectory, CoverIndex.fileName)
        var report = VerifyReport()
        var index: CoverIndex?
        if FileManager.default.fileExists(atPath: indexPath) {
            do {
                index = try CoverIndex(cacheDirectory: cacheDirectory)
            } catch {
                report.markingFailure = error
                do {
                    index = try CoverIndex(cacheDirectory: cacheDirectory, readOnly: true)
                } catch {
                    report.indexFailure = error
                }
            }
        }
        var rows: [IndexRow] = []
        do {
            rows = try index?.rows() ?? []
        } catch {
            report.indexFailure = error
        }
        var bad: [AlbumID: String] = [:]
        let validator = PNGValidator(limits: limits)
        for name in store.listNames().sorted() where name.hasSuffix(".png") {
            let path = join(store.directory, name)
            report.checked += 1
            let reason: String
            do {
                _ = try validator.validate(try readRegularFile(path, limit: maxBytes))
                continue
            } catch let error as PNGValidationError {
                reason = error.description
            } catch let error as FileReadError {
                reason = "cannot read: \(error)"
            } catch {
                reason = "\(error)"
            }
            report.problems.append(VerifyProblem(path: path, reason: reason))
            let id = String(name.dropLast(4))
            if AlbumID.isValid(id) { bad[AlbumID(trusted: id)] = reason }
        }
        for row in rows where row.state == .cached && row.removedAt == nil && store.stamp(for: row.id) == nil {
            let path = store.path(for: row.id)
            report.problems.append(VerifyProblem(path: path, reason: "missing (the index says cached)"))
            bad[row.id] = "missing"
        }
        // The covers kept for albums that left the records: a bad or missing one is reported and
        // dropped with its row, so it is fetched again should its album come back, and the next verify is clean.
        var dropped: [IndexChange] = []
        for id in Set(rows.filter { $0.removedAt != nil }.map(\.id)).sorted() {
            let path = store.keptPath(for: id)
            report.checked += 1
            let reason: String
            do {
                _ = try validator.validate(try readRegularFile(path, limit: maxBytes))
                continue
            } catch let error as PNGValidationError {
                reason = "\(error)"
            } catch .cannotOpen(let code) as FileReadError where code == ENOENT {
                reason = "missing"
            } catch {
                reason = "cannot read: \(error)"
            }
            report.problems.append(VerifyProblem(path: path, reason: "\(reason) (kept for a removed album; dropped, so it is fetched again if the album comes back)"))
            dropped.append(.delete(id))
        }
        var changes: [IndexChange] = rows.compactMap { row in
            guard row.state == .cached, row.removedAt == nil, let reason = bad[row.id] else { return nil }
            var marked = row
            marked.state = .failed
            marked.error = "cached cover is corrupt: \(reason); it is fetched again on the next reload"
            marked.updatedAt = Date()
            return .upsert(marked)
        }
        report.markable = changes.count
        changes += dropped
        guard !changes.isEmpty, report.markingFailure == nil, report.indexFailure == nil, let index else { return report }
        do {
            try index.apply(changes)
            report.marked = report.markable
        } catch {
            report.markingFailure = error
            return report
        }
        // The rows went first: a file without a row is swept by the daemon's next start, never the reverse.
        for case .delete(let id) in dropped { store.purgeKept(id) }
        return report
    }
}
