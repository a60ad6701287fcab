import CLinux

/// Process-wide allocator settings for the daemon, applied once before its
/// threads start, and a release of free pages once the start-up has freed
/// many. Each setting's measurements are in bench/HISTORY.md ("MallocSettings");
/// a refusal by `mallopt` (it returns 0) leaves glibc's defaults, which are
/// correct, only larger.
package enum MallocSettings {
    /// True when glibc accepted every setting.
    @discardableResult
    package static func apply() -> Bool {
        // Bodies are allocated on the transfer thread and freed on the
        // workers, and memory freed into one arena is not reused by another:
        // few arenas keep a sync's peak low. Three, not two, so the first
        // scan's parsing threads do not queue on one arena's lock.
        let arenas = coverd_set_malloc_arena_max(3)
        // Blocks of 512 KiB and more that an arena's free space cannot hold get
        // pages of their own, handed back when freed, rather than growing the
        // arena; glibc's default threshold would rise with each such block and
        // leave the start-up's large tables in the arenas, which keep their pages.
        // Not lower: rows of covers under 256 KiB would then fault in afresh each
        // time; not higher: covers of 0.5–1 MiB left holes in the arenas.
        let mapped = coverd_set_malloc_mmap_threshold(512 << 10)
        // A fixed mmap threshold also fixes the trim threshold at 128 KiB,
        // which gave back an arena's top after nearly every cover, so its rows
        // and body were faulted in again: keep up to 1 MiB free there.
        let trimmed = coverd_set_malloc_trim_threshold(1 << 20)
        return arenas != 0 && mapped != 0 && trimmed != 0
    }

    /// Hands the free pages inside the arenas back to the kernel. Called after
    /// the first scan: its parsing leaves freed buffers below live blocks,
    /// where the heap's top cannot shrink, and the scan's decisions, which come
    /// next, are the start-up's memory peak; and during a sync, through
    /// `FreePageRelease`, for the holes covers leave.
    package static func releaseFreePages() {
        _ = malloc_trim(0)
    }
}
