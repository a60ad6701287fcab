import CLinux

/// Process-wide allocator settings for the daemon, applied once before its
/// threads start, and a release of free pages once the start-up has freed
/// many. Each was measured with the benchmarks; a refusal by `mallopt` (it
/// returns 0) leaves glibc's defaults, which are correct, only larger.
package enum MallocSettings {
    package static func apply() {
        // glibc gives each thread that allocates concurrently an arena of its
        // own, up to eight per core, and memory freed into one arena is not
        // reused by another: with bodies allocated on the transfer thread and
        // freed on the workers, peak RSS during a 10,000-cover sync was
        // 89.6 MiB with the default and 73.9 MiB with one arena, at no cost in
        // speed. Three, not two: the first scan parses on the main thread and
        // a Dispatch worker, and a worker that found the second arena taken
        // shared the main thread's and queued on its lock: restarts over
        // 100,000 albums took 0.97–1.34 s to READY (median 1.31) with two and
        // 0.70–1.04 s (median 0.86) with three, five runs each. A full sync's
        // peak was 55.0–55.5 MiB with three, 51.5–54.1 with two, four runs each.
        _ = coverd_set_malloc_arena_max(3)
        // Blocks of 1 MiB and more get pages of their own, handed back to the
        // kernel when freed. glibc's default threshold rises to the size of
        // each such block freed (up to 32 MiB), after which the start-up's
        // tables (index rows, hash tables of 100,000 albums) land in the
        // arenas, which keep their pages when the tables are freed or
        // regrown. Restarting over 100,000 albums, the peak was 4.7–5.8 MiB
        // higher with long ids (120.0–120.3 against 114.5–115.3 MiB with
        // derived ids, 126.7–127.1 against 121.4–121.9 with 60-character
        // ids). A fixed threshold also fixes the trim threshold (128 KiB), so
        // the heap's top is given back more often; a full sync was no slower,
        // with the same peak RSS (see bench/HISTORY.md).
        _ = coverd_set_malloc_mmap_threshold(1 << 20)
        // That 128 KiB trim threshold, though, gave back the top of an arena
        // after nearly every cover: each download's rows (276 KB on average,
        // inflated to be checked) and body were then faulted in and zeroed
        // again, 191,000–380,000 page faults in a 10,000-cover sync. Keeping
        // up to 1 MiB free at an arena's top (there are three) cut them to
        // 19,000–29,000 and the sync's CPU from 10.0–10.9 s to 9.4–9.8 s
        // (`bench/ab.py`, 3 rounds, see bench/HISTORY.md), peak RSS within
        // the spread.
        _ = coverd_set_malloc_trim_threshold(1 << 20)
    }

    /// Hands the free pages inside the arenas back to the kernel. Called once,
    /// after the first scan: parsing 100,000 albums on two threads leaves
    /// their freed buffers in the arenas, below live blocks where the heap's
    /// top cannot shrink, and the first scan's decisions, which come next,
    /// are the start-up's memory peak. After a cache drop, with 128-character
    /// ids, that peak was 2–3 MiB lower in two runs each (128.1, 128.1
    /// against 126.0, 125.1 MiB), about the spread between runs; on a restart
    /// it was the same. Under `strace`, a start made 45 `madvise` calls, 3.0
    /// ms in all.
    package static func releaseFreePages() {
        _ = malloc_trim(0)
    }
}
