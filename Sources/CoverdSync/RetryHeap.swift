import Foundation
import CoverdModel

/// What a `DueHeap` orders: anything with a due time.
protocol DueTimed {
    var due: Date { get }
}

/// A min-heap of due times (retries of waiting jobs, revalidations).
///
/// Entries are never removed early: each carries its owner's token at the
/// time it was scheduled, and a popped entry whose token no longer matches is
/// simply skipped. That keeps rescheduling O(log n).
struct DueHeap<Entry: DueTimed> {
    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var earliest: Entry? { entries.first }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].due < entries[parent].due else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let top = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].due < entries[smallest].due { smallest = left }
            if right < entries.count && entries[right].due < entries[smallest].due { smallest = right }
            guard smallest != parent else { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    /// The heap anew with only the entries `keep` picks (the live ones).
    mutating func retain(where keep: (Entry) -> Bool) {
        let kept = entries.filter(keep)
        entries = []
        entries.reserveCapacity(kept.count)
        for entry in kept { push(entry) }
    }
}

/// A job waiting to retry, and its token when it was scheduled.
struct RetryEntry: DueTimed {
    var due: Date
    var key: JobKey
    var token: UInt64
}

/// The wake-up times of jobs waiting to retry.
typealias RetryHeap = DueHeap<RetryEntry>
