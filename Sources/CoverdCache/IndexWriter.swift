import Dispatch
import Synchronization
import CoverdBase
import CoverdModel

/// Writes index changes off the caller's thread, batching whatever piled up
/// into one transaction.
///
/// Ordering: changes are applied in the order they were submitted. A flush
/// is scheduled as soon as the first change of a batch arrives, so under a
/// light load every change is written at once and under a heavy load many
/// share one commit. `flush()` waits until everything submitted is written.
public final class IndexWriter: Sendable {
    private let index: CoverIndex
    private let reserve: SpaceReserve?
    private let queue = DispatchQueue(label: "coverd.index-writer")
    private let pending = Mutex(Pending())
    private let onError: @Sendable (IndexError) -> Void

    private struct Pending {
        var changes: [IndexChange] = []
        var scheduled = false
        /// Set while writes fail, so that a full disk is reported once, not every retry.
        var failing = false
    }

    /// - Parameter reserve: released when a write fails for lack of space, so the next one fits.
    public init(index: CoverIndex, reserve: SpaceReserve? = nil, onError: @escaping @Sendable (IndexError) -> Void) {
        self.index = index
        self.reserve = reserve
        self.onError = onError
        reserve?.ensure()
    }

    public func submit(_ changes: [IndexChange]) {
        guard !changes.isEmpty else { return }
        let schedule = pending.withLock { pending -> Bool in
            pending.changes += changes
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if schedule {
            // A few milliseconds of gathering: under load, hundreds of changes share one commit.
            queue.asyncAfter(deadline: .now() + .milliseconds(5)) { self.writeBatch() }
        }
    }

    /// Blocks until every change submitted so far is committed.
    public func flush() {
        queue.sync { self.writeBatch() }
    }

    private func writeBatch() {
        let batch = pending.withLock { pending -> [IndexChange] in
            defer {
                pending.changes = []
                pending.scheduled = false
            }
            return pending.changes
        }
        guard !batch.isEmpty else { return }
        do {
            do {
                try index.apply(batch)
            } catch where error.isOutOfSpace && reserve?.release() == true {
                try index.apply(batch)  // The reserve made room for this one.
            }
            pending.withLock { $0.failing = false }
            reserve?.ensure()
        } catch {
            // Keep the batch (a full disk frees up; a locked database unlocks)
            // and try again shortly; newer changes stay after it, in order.
            // Kept changes are merged, so that while writes fail memory holds
            // one change per album, not every change made meanwhile.
            let (retry, report) = pending.withLock { pending -> (Bool, Bool) in
                pending.changes = IndexWriter.lastPerAlbum(batch + pending.changes)
                defer {
                    pending.scheduled = true
                    pending.failing = true
                }
                return (!pending.scheduled, !pending.failing)
            }
            if report { onError(error) }
            if retry {
                queue.asyncAfter(deadline: .now() + .seconds(2)) { self.writeBatch() }
            }
        }
    }
}

extension IndexWriter {
    /// The last change to each album, in the order of those last changes:
    /// applied, they leave the index as applying all of `changes` in order
    /// would, since a row's final state is its last change.
    static func lastPerAlbum(_ changes: [IndexChange]) -> [IndexChange] {
        var seen = Set<AlbumID>(minimumCapacity: changes.count)
        var kept: [IndexChange] = []
        for change in changes.reversed() where seen.insert(change.albumID).inserted {
            kept.append(change)
        }
        return kept.reversed()
    }
}

extension IndexChange {
    var albumID: AlbumID {
        switch self {
        case .upsert(let row): row.id
        case .delete(let id): id
        }
    }
}

extension IndexWriter: LivenessProbing {
    public func probe(_ reply: @escaping @Sendable () -> Void) {
        queue.async(execute: reply)
    }
}
