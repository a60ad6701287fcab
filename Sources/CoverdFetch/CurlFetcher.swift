import Dispatch
import Foundation
import Synchronization
import CoverdBase
import CoverdModel

/// Fetches covers with libcurl: one multi handle on a dedicated transfer
/// thread drives every transfer at once, with connection reuse, under the
/// `concurrency` and `per_host` limits.
///
/// Thread-safe: every method only queues a command for the transfer thread
/// (waking it unless an earlier command already did: `TransferInbox`);
/// completions are called on that thread and must return quickly.
public final class CurlFetcher: CoverFetching {
    private let inbox: TransferInbox
    /// The User-Agent every transfer sends, when not the settings' (`FetchSettings.contact`).
    private let userAgent: String?
    /// The CA bundles `ca_file` made, kept across reloads (`CABundleFiles`).
    private let bundleFiles: CABundleFiles
    /// libcurl's CA bundle file, as the transfers are told of it.
    private let systemBundle: String?
    private let stopped = DispatchSemaphore(value: 0)
    private let isShutDown = Atomic<Bool>(false)
    /// The transfer thread's name.
    public static let threadName = "coverd-transfer"
    /// Warnings from setting up at start (an unreadable system CA bundle), for the caller to log; `apply` returns a reload's.
    public let notes: [String]

    /// Bytes of cover bodies held in memory at once (granted to transfers, or
    /// delivered and not yet consumed), passed by one body at most (the oldest
    /// transfer's, or one alone in memory; `BodyBudget`): small enough that a sync of large covers stays within the
    /// daemon's memory goal, while `make bench`'s covers still keep the workers fed.
    public static let bodyMemory = 4 << 20

    /// `userAgent`: nil sends `coverd/<version> ( <contact> )`.
    public convenience init(settings: FetchSettings, userAgent: String? = nil) throws(SystemError) {
        try self.init(settings: settings, userAgent: userAgent, longestWait: CurlSocketDriver.defaultLongestWait)
    }

    /// `longestWait`: see `CurlSocketDriver.defaultLongestWait` (tests lengthen it, to see libcurl's timer alone at work).
    /// `bodyMemory`: see `CurlFetcher.bodyMemory` (tests shrink it). `systemBundle`: libcurl's CA bundle file (tests name a missing one).
    init(
        settings: FetchSettings, userAgent: String?, longestWait: Duration, bodyMemory: Int = CurlFetcher.bodyMemory,
        systemBundle: String? = CurlGlobal.defaultCABundle
    ) throws(SystemError) {
        self.userAgent = userAgent
        self.systemBundle = systemBundle
        let bundleFiles = CABundleFiles()
        self.bundleFiles = bundleFiles
        inbox = try TransferInbox()
        let options = try TransferOptions(settings: settings, userAgent: userAgent, bundleFiles: bundleFiles, systemBundle: systemBundle)
        notes = options.notes
        let inbox = self.inbox
        let epoll = try EpollSet(watching: inbox.wake.descriptor)
        let stopped = self.stopped
        let thread = Thread {
            // Named from inside: Foundation names the kernel's thread (`comm`, 15 bytes at most,
            // as `top -H` and /proc show it) only for the current thread.
            Thread.current.name = CurlFetcher.threadName
            TransferLoop(inbox: inbox, options: options, epoll: epoll, longestWait: longestWait, bodyMemory: bodyMemory).run()
            stopped.signal()
        }
        thread.start()
    }

    deinit {
        shutdown()
    }

    public func fetch(_ id: FetchID, url: CoverURL, purpose: FetchPurpose, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        guard inbox.send(.start(id, url, purpose, completion)) else {
            completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled: shutting down")))
            return
        }
    }

    public func cancel(_ id: FetchID) {
        inbox.send(.cancel(id))
    }

    public func bodyConsumed(bytes: Int) {
        inbox.send(.bodyConsumed(bytes: bytes))
    }

    /// Reads `ca_file` here, on the caller's thread, so that an unreadable
    /// file is the caller's error and the running transfers keep the old settings.
    @discardableResult
    public func apply(_ settings: FetchSettings) throws(SystemError) -> [String] {
        let options = try TransferOptions(settings: settings, userAgent: userAgent, bundleFiles: bundleFiles, systemBundle: systemBundle)
        inbox.send(.settings(options))
        return options.notes
    }

    /// The body budget as the transfer thread sees it between two turns (tests watch bodies wait for room).
    func inspectBudget(_ reply: @escaping @Sendable (BodyBudget.Snapshot) -> Void) {
        inbox.send(.inspectBudget(reply))
    }

    public func shutdown() {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        inbox.send(.shutdown)
        stopped.wait()
    }

    /// The libcurl version line, for `--version` and the start-up log.
    public static var libcurlVersion: String { CurlGlobal.version }
}

extension CurlFetcher: LivenessProbing {
    /// Answered by the transfer thread between two turns of its loop.
    public func probe(_ reply: @escaping @Sendable () -> Void) {
        inbox.send(.probe(reply))
    }
}
