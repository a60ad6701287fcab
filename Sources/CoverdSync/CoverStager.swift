import CoverdCache
import CoverdFetch
import CoverdImages
import CoverdModel

/// Stages a cover (the slow half of putting it in the cache), run in the worker pool or the
/// conversion pool: decide what the bytes are, validate or convert them, and write one
/// temporary file per album (fsynced here only when `flushEach`; otherwise
/// the `FlushBatcher` makes the batch durable). The rename into place happens
/// later, on the coordinator's queue.
struct CoverStager: Sendable {
    let store: CoverStore
    let pipeline: CoverImagePipeline
    var flushEach = false
    /// Cancelled at stop: a conversion under way gives up rather than hold the stop.
    var cancellation: ConversionCancellation?

    func stage(_ request: StageRequest) -> Result<StagedCovers, StagingFailure> {
        let png: [UInt8]
        let status: Int?
        let duration: Duration
        var validators = Validators(etag: nil, lastModified: nil)
        var copiedFrom: AlbumID?
        switch request.source {
        case .download(let body):
            do {
                png = try pipeline.makePNG(from: body.bytes, sourceURL: request.url.string, cancellation: cancellation).png
            } catch .cancelled {
                return .failure(.stopped)
            } catch {
                return .failure(.image(error))
            }
            status = body.httpStatus
            duration = body.duration
            validators = body.validators
        case .cachedCover(let sibling):
            let started = ContinuousClock.now
            do {
                let bytes = try store.read(sibling, limit: Int.max / 2)
                png = try pipeline.makePNG(from: bytes, sourceURL: request.url.string, cancellation: cancellation).png
            } catch CoverImageError.cancelled {
                return .failure(.stopped)
            } catch {
                return .failure(.sourceUnavailable("\(store.path(for: sibling)): \(error)"))
            }
            status = nil
            duration = ContinuousClock.now - started
            copiedFrom = sibling
        }
        var temporaries: [AlbumID: TemporaryCover] = [:]
        for id in request.albums {
            do {
                // Made durable before any rename: here, or in a batch by the FlushBatcher.
                temporaries[id] = try store.writeTemporary(png, for: id, flush: flushEach)
            } catch {
                temporaries.values.forEach(store.discard)
                return .failure(.storage(error, bytes: png.count))
            }
        }
        return .success(StagedCovers(
            temporaries: temporaries, bytes: png.count, httpStatus: status, duration: duration, validators: validators, copiedFrom: copiedFrom))
    }
}
