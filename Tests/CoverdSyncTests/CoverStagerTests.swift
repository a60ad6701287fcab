@testable import CoverdCache
@testable import CoverdFetch
@testable import CoverdImages
@testable import CoverdModel
@testable import CoverdSync
import CoverdTestSupport
import Foundation
import Testing

/// Staging given up at a stop: a conversion cancelled midway is no failure of
/// the album's, and leaves nothing behind in the cache.
@Suite("Cover stager")
struct CoverStagerTests {
    @Test("Given a stop under way, when a downloaded JPEG is staged, then staging ends as stopped, not as a bad image, and no temporary file is left")
    func downloadStoppedMidConversion() throws {
        // Given
        let directory = TestDirectory()
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let jpeg = try Self.jpeg()
        let stager = CoverStager(store: store, pipeline: CoverImagePipeline(), cancellation: Self.cancelled())
        let body = FetchedBody(bytes: jpeg, httpStatus: 200, effectiveURL: Self.url.string, duration: .zero)

        // When
        let result = stager.stage(Self.request(.download(body)))

        // Then
        guard case .failure(.stopped) = result else {
            Issue.record("expected .stopped, got \(result)")
            return
        }
        #expect(store.listNames().isEmpty, "\(store.listNames())")
        #expect(try Self.temporaries(in: store).isEmpty, "a temporary file was left in incoming/")
    }

    @Test("Given a stop under way, when another album's cached cover, larger than max_dimension, is to be scaled for this one, then staging ends as stopped, not as the cached file being unusable")
    func cachedCopyStoppedMidConversion() throws {
        // Given: the sibling's cached cover is a PNG larger than max_dimension, so it is decoded and scaled
        let directory = TestDirectory()
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let sibling = AlbumID(trusted: "sibling")
        _ = try store.commit(try store.writeTemporary(PNGFixture.make(width: 64, height: 64), for: sibling, flush: false), as: sibling)
        let pipeline = CoverImagePipeline(output: ImageOutput(maxDimension: 16))
        let stager = CoverStager(store: store, pipeline: pipeline, cancellation: Self.cancelled())

        // When
        let result = stager.stage(Self.request(.cachedCover(sibling)))

        // Then
        guard case .failure(.stopped) = result else {
            Issue.record("expected .stopped, got \(result)")
            return
        }
        #expect(store.listNames() == ["sibling.png"], "only the sibling's cover: \(store.listNames())")
        #expect(try Self.temporaries(in: store).isEmpty, "a temporary file was left in incoming/")
    }

    @Test("Given no stop, when the same JPEG is staged, then its PNG is written for every album of the request")
    func stagedWithoutStop() throws {
        // Given
        let directory = TestDirectory()
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let stager = CoverStager(store: store, pipeline: CoverImagePipeline(), cancellation: ConversionCancellation())
        let body = FetchedBody(bytes: try Self.jpeg(), httpStatus: 200, effectiveURL: Self.url.string, duration: .zero)

        // When
        let result = stager.stage(Self.request(.download(body)))

        // Then
        guard case .success(let staged) = result else {
            Issue.record("expected staged covers, got \(result)")
            return
        }
        #expect(Set(staged.temporaries.keys) == [AlbumID(trusted: "a"), AlbumID(trusted: "b")])
        #expect(try Self.temporaries(in: store).count == 2, "where the stopped cases look for leftovers")
        staged.temporaries.values.forEach(store.discard)
    }

    private static let url: CoverURL = {
        do { return try CoverURL(validating: "http://covers.test/a.jpg") } catch { preconditionFailure("\(error)") }
    }()

    private static func request(_ source: StageRequest.Source) -> StageRequest {
        StageRequest(fetchID: FetchID(1), job: .url(url), url: url, source: source, albums: [AlbumID(trusted: "a"), AlbumID(trusted: "b")])
    }

    /// The files in `incoming/`, where staging writes its temporaries.
    private static func temporaries(in store: CoverStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.incomingDirectory)
    }

    private static func cancelled() -> ConversionCancellation {
        let cancellation = ConversionCancellation()
        cancellation.cancel()
        return cancellation
    }

    private static func jpeg() throws -> [UInt8] {
        try ImageTools().run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 40, height: 30, channels: 3).pam), output: "out.jpg")
    }
}
