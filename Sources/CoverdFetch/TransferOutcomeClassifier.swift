import CCurl
import CoverdBase
import Foundation

/// How a finished transfer's CURLcode and HTTP status become a
/// `FetchOutcome`: contract §4's classification of failures into transient
/// (retried with backoff) and permanent ones, each with a message naming what failed.
struct TransferOutcomeClassifier {
    let settings: FetchSettings

    /// Turns a finished transfer into its outcome, with when its request went
    /// out (for a caller that paces an origin by what reaches it).
    func outcome(of transfer: Transfer, code: CURLcode, now: Date) -> FetchOutcome {
        let sent = transfer.easy.info(microseconds: CURLINFO_PRETRANSFER_TIME_T).map { transfer.started + $0 }
        switch classify(transfer, code: code, now: now) {
        case .success(var body):
            body.requestSent = sent
            return .success(body)
        case .notModified(let answer):
            return .notModified(answer)
        case .failure(var failure):
            failure.requestSent = sent
            return .failure(failure)
        }
    }

    private func classify(_ transfer: Transfer, code: CURLcode, now: Date) -> FetchOutcome {
        let duration = ContinuousClock.now - transfer.started
        let status = transfer.easy.info(long: CURLINFO_RESPONSE_CODE)
        let detail = transfer.errorText.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.errorText
        func failure(_ kind: FetchFailure.Kind, _ message: String) -> FetchOutcome {
            .failure(FetchFailure(kind: kind, message: message, httpStatus: status == 0 ? nil : status, duration: duration))
        }
        switch code {
        case CURLE_OK:
            let url = transfer.easy.info(string: CURLINFO_EFFECTIVE_URL) ?? transfer.url.string
            if (200...299).contains(status) {
                var body = FetchedBody(bytes: transfer.takeBody(), httpStatus: status, effectiveURL: url, duration: duration)
                body.validators = transfer.validators
                return .success(body)
            }
            if status == 304, let asked = transfer.revalidating, !asked.isEmpty {
                return .notModified(NotModified(effectiveURL: url, duration: duration, validators: transfer.validators))
            }
            let retryAfter = transfer.retryAfter.flatMap { RetryAfter.delay(from: $0, now: now) }
            let reason = transfer.reason.isEmpty ? "" : " \(transfer.reason)"
            let message = (300...399).contains(status) ? "HTTP \(status)\(reason) (a redirect without a usable Location)" : "HTTP \(status)\(reason)"
            return .failure(FetchFailure(kind: .http(status), message: message, httpStatus: status, retryAfter: retryAfter, duration: duration))
        case CURLE_WRITE_ERROR where transfer.abandonedErrorBody:
            // The status said enough; the rest of a long error page was not worth reading.
            return .failure(FetchFailure(
                kind: .http(transfer.status), message: "HTTP \(transfer.status)" + (transfer.reason.isEmpty ? "" : " \(transfer.reason)"),
                httpStatus: transfer.status, retryAfter: transfer.retryAfter.flatMap { RetryAfter.delay(from: $0, now: now) },
                duration: duration))
        case CURLE_WRITE_ERROR where transfer.exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return failure(.tooLarge, "response is larger than the \(transfer.maxBytes)-byte limit")
        case CURLE_TOO_MANY_REDIRECTS:
            return failure(.tooManyRedirects, "more than \(settings.maxRedirects) redirects")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return failure(.disallowedProtocol, "redirect to a URL coverd does not fetch (only http and https): \(detail)")
        case CURLE_PEER_FAILED_VERIFICATION:
            return failure(.tls, "TLS certificate verification failed: \(detail)")
        case CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return failure(.tls, "TLS error: \(detail)")
        case CURLE_OPERATION_TIMEDOUT:
            return failure(.timeout, "timed out: \(detail)")
        case CURLE_URL_MALFORMAT, CURLE_BAD_CONTENT_ENCODING:
            return failure(.other, detail)
        default:
            // Connection refused or reset, DNS, a short body, a TLS handshake cut off: try again later.
            return failure(.connection, "\(detail) (curl error \(code.rawValue))")
        }
    }
}
