import CCurl
import Foundation
import CoverdBase
import CoverdModel

/// The transfer thread's state: one multi handle (one connection cache, as
/// `curl -Z` uses) driven by `curl_multi_socket_action` (`CurlSocketDriver`),
/// the active transfers, the admission queue and a pool of reusable easy
/// handles. Created and used on the transfer thread only.
final class TransferLoop {
    private let inbox: TransferInbox
    private var options: TransferOptions
    private var classifier: TransferOutcomeClassifier
    private let driver: CurlSocketDriver
    private var multi: CurlMulti { driver.multi }
    private var admission: AdmissionQueue<Waiting>
    private var active: [FetchID: Transfer] = [:]
    private var origins: [FetchID: String] = [:]
    /// The completions of covers waiting for an admission slot. One cancelled
    /// meanwhile is completed at once and left in the admission queue, where it
    /// is skipped when its turn comes (finding it there would cost a search).
    private var waiting: [FetchID: @Sendable (FetchOutcome) -> Void] = [:]
    /// Answers started and not finished, and those waiting for room (`answerRoom`).
    private var answersActive = 0
    private var answersWaiting: [Waiting] = []
    /// Answers running at once. Their callers pace them (one MusicBrainz request
    /// in flight at a time), so one is held here only when a caller breaks that;
    /// libcurl keeps this many connections spare beyond the covers' `concurrency`
    /// (`CurlMulti.apply`), so an answer never waits inside libcurl behind covers.
    static let answerRoom = 2
    private var pool: [CurlEasy] = []
    /// Bodies delivered but not yet consumed (written to a temporary file).
    private static let bodiesWaitingAllowance = 8
    private var bodiesInHand = 0
    /// The bytes of cover bodies in memory, received or waiting to be consumed.
    private var budget: BodyBudget

    private struct Waiting {
        var id: FetchID
        var url: CoverURL
        /// An answer's size cap, when smaller than the settings'.
        var limit: Int?
        /// A revalidation's validators.
        var validators: Validators? = nil
        var completion: @Sendable (FetchOutcome) -> Void
    }

    init(inbox: TransferInbox, options: TransferOptions, epoll: EpollSet, longestWait: Duration, bodyMemory: Int) {
        self.inbox = inbox
        self.options = options
        budget = BodyBudget(limit: bodyMemory)
        classifier = TransferOutcomeClassifier(settings: options.settings)
        driver = CurlSocketDriver(multi: CurlMulti(settings: options.settings), epoll: epoll, longestWait: longestWait)
        admission = AdmissionQueue(concurrency: options.settings.concurrency, perHost: options.settings.perHost)
    }

    /// Runs until a `.shutdown` command; every fetch is completed before it returns.
    ///
    /// A transfer added by `startAdmitted` sets libcurl's timer to zero, so
    /// the wait that follows returns at once and the transfer starts; one that
    /// finishes frees its slot for the next turn, which starts the next.
    func run() {
        while true {
            let commands = inbox.drain()
            for (position, command) in commands.enumerated() {
                if case .shutdown = command {
                    shutDown(after: commands[(position + 1)...])
                    return
                }
                handle(command)
            }
            resumeWithRoom()
            startAdmitted()
            if driver.waitAndAct(transfersActive: !active.isEmpty) { inbox.wake.drain() }
            collectFinished()
        }
    }

    private func handle(_ command: TransferCommand) {
        switch command {
        case .start(let id, let url, .cover, let completion):
            waiting[id] = completion
            admission.enqueue(Waiting(id: id, url: url, limit: nil, completion: completion), origin: url.origin)
        case .start(let id, let url, .revalidation(let validators), let completion):
            waiting[id] = completion
            admission.enqueue(Waiting(id: id, url: url, limit: nil, validators: validators, completion: completion), origin: url.origin)
        case .start(let id, let url, .answer(let limit), let completion):
            answersWaiting.append(Waiting(id: id, url: url, limit: limit, completion: completion))
        case .cancel(let id):
            if let transfer = active[id] {
                finish(transfer, with: .failure(FetchFailure(kind: .cancelled, message: "cancelled")))
            } else if let completion = waiting.removeValue(forKey: id) {
                completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled")))
            } else if let position = answersWaiting.firstIndex(where: { $0.id == id }) {
                answersWaiting.remove(at: position).completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled")))
            }
        case .settings(let newOptions):
            options = newOptions
            classifier = TransferOutcomeClassifier(settings: newOptions.settings)
            multi.apply(newOptions.settings)
            admission.concurrency = newOptions.settings.concurrency
            admission.perHost = newOptions.settings.perHost
        case .probe(let reply):
            reply()
        case .inspectBudget(let reply):
            reply(budget.snapshot)
        case .bodyConsumed(let bytes):
            bodiesInHand = max(0, bodiesInHand - 1)
            budget.consumed(bytes)
        case .shutdown:
            break
        }
    }

    private func startAdmitted() {
        while answersActive < TransferLoop.answerRoom, !answersWaiting.isEmpty {
            if begin(answersWaiting.removeFirst(), admittedFrom: nil) { answersActive += 1 }
        }
        // A few bodies may wait for a worker while every transfer runs: enough
        // to keep the workers busy, few enough to bound memory; and none starts
        // while the bodies' bytes are at their budget.
        while bodiesInHand + admission.activeCount < admission.concurrency + TransferLoop.bodiesWaitingAllowance,
            budget.admitsMore,
            let (next, origin) = admission.next().map({ ($0.item, $0.origin) })
        {
            guard waiting.removeValue(forKey: next.id) != nil else {
                admission.finished(origin: origin)  // Cancelled while it waited, and completed then.
                continue
            }
            begin(next, admittedFrom: origin)
        }
    }

    /// Adds `next` to the multi handle, or completes it with the reason it
    /// could not start (false). `origin`: the admission queue's, for a cover;
    /// nil for an answer, which holds no admission slot and no body budget.
    @discardableResult
    private func begin(_ next: Waiting, admittedFrom origin: String?) -> Bool {
        let easy = pool.popLast() ?? CurlEasy()
        let maxBytes = min(next.limit ?? options.settings.maxBytes, options.settings.maxBytes)
        let transfer = Transfer(
            id: next.id, url: next.url, easy: easy, maxBytes: maxBytes, revalidating: next.validators, completion: next.completion)
        var failure: FetchFailure?
        do {
            try options.configure(transfer)
            let code = curl_multi_add_handle(multi.handle, easy.handle)
            if code != CURLM_OK { failure = FetchFailure(kind: .other, message: String(cString: curl_multi_strerror(code))) }
        } catch {
            failure = FetchFailure(kind: .other, message: error.description)
        }
        if let failure {
            if let origin { admission.finished(origin: origin) }
            recycle(easy)
            next.completion(.failure(failure))
            return false
        }
        active[next.id] = transfer
        if let origin {
            origins[next.id] = origin
            // A cover's bytes count against the budget; an answer's never wait for it.
            budget.began(next.id)
            let id = next.id
            transfer.mayTake = { [unowned self] count in budget.take(count, for: id) }
        }
        return true
    }

    /// Resumes the paused transfers the budget has room for again (bodies were
    /// consumed, or transfers ended). libcurl may hand a resumed transfer the
    /// bytes it kept from inside `curl_easy_pause`, so the budget is asked again there.
    private func resumeWithRoom() {
        for id in budget.toResume() {
            guard let transfer = active[id] else { continue }
            let code = curl_easy_pause(transfer.easy.handle, CURLPAUSE_RECV_CONT | CURLPAUSE_SEND_CONT)
            if code != CURLE_OK {
                finish(transfer, with: .failure(FetchFailure(kind: .other, message: "cannot resume the transfer: \(String(cString: curl_easy_strerror(code)))")))
            }
        }
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easyHandle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var pointer: UnsafeMutableRawPointer?
            coverd_easy_getinfo_pointer(easyHandle, CURLINFO_PRIVATE, &pointer)
            guard let pointer else { continue }
            let transfer = Transfer.from(pointer)
            finish(transfer, with: classifier.outcome(of: transfer, code: code, now: Date()))
        }
    }

    /// Removes a transfer from the multi handle and reports its outcome. The
    /// easy handle is removed before the transfer is released, so libcurl
    /// never calls back into a freed object.
    private func finish(_ transfer: Transfer, with outcome: FetchOutcome) {
        curl_multi_remove_handle(multi.handle, transfer.easy.handle)
        active[transfer.id] = nil
        transfer.mayTake = nil
        if let origin = origins.removeValue(forKey: transfer.id) {
            // A cover: its slot frees, and its body is held until consumed.
            admission.finished(origin: origin)
            let kept: Int?
            if case .success(let body) = outcome { kept = body.bytes.count } else { kept = nil }
            if kept != nil { bodiesInHand += 1 }
            budget.ended(transfer.id, keeping: kept)
        } else {
            answersActive -= 1
        }
        recycle(transfer.easy)
        transfer.completion(outcome)
    }

    /// Resets the handle before anything else, so that no option (the error
    /// buffer, the callback data) still points into a transfer being released.
    private func recycle(_ easy: CurlEasy) {
        easy.reset()
        guard pool.count < admission.concurrency else { return }
        pool.append(easy)
    }

    /// Closes the inbox and completes every fetch, queued or running, as
    /// cancelled; `later` is what the drain that found `.shutdown` held after it.
    private func shutDown(after later: ArraySlice<TransferCommand>) {
        for command in later + inbox.close() {
            switch command {
            case .start(_, _, _, let completion): completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled: shutting down")))
            case .probe(let reply): reply()
            case .inspectBudget(let reply): reply(budget.snapshot)
            case .cancel, .settings, .bodyConsumed, .shutdown: break
            }
        }
        cancelEverything()
    }

    private func cancelEverything() {
        for transfer in Array(active.values) {
            finish(transfer, with: .failure(FetchFailure(kind: .cancelled, message: "cancelled: shutting down")))
        }
        // Only covers still waiting: a cancelled one was completed at its cancel.
        for item in admission.removeWaiting(where: { _ in true }) {
            if waiting.removeValue(forKey: item.id) != nil {
                item.completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled: shutting down")))
            }
        }
        for item in answersWaiting {
            item.completion(.failure(FetchFailure(kind: .cancelled, message: "cancelled: shutting down")))
        }
        answersWaiting = []
    }
}
