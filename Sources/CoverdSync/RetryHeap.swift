import Foundation
import CoverdModel

/// A min-heap of wake-up times for jobs waiting to retry.
///
/// Entries are never removed early: each carries the job's token at the time
/// it was scheduled, and a popped entry whose token no longer matches the job
/// is simply skipped. That keeps rescheduling O(log n).
struct RetryHeap {
    struct Entry {
        var due: Date
        var key: JobKey
        var token: UInt64
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var earliest: Entry? { entries.first }

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
}
