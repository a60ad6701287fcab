// libFuzzer target: MusicBrainz's answers (a release, a release-group search)
// from any bytes, as a hostile or broken server could send them. Built by
// scripts/fuzz.sh with the lookup layer; see `make fuzz`.
import CoverdLookup
import CoverdModel

@_cdecl("LLVMFuzzerTestOneInput")
public func lookupFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(MusicBrainzAnswer.Malformed) {
        let group = try MusicBrainzAnswer.releaseGroup(ofRelease: bytes)
        // The id goes into a request path: only the canonical UUID form may come out.
        precondition(MusicBrainzID(group.rawValue) == group, "group \(group)")
    } catch {
        precondition(!error.reason.isEmpty)
    }
    do throws(MusicBrainzAnswer.Malformed) {
        let search = try MusicBrainzAnswer.releaseGroupSearch(bytes)
        for candidate in search.candidates {
            precondition(MusicBrainzID(candidate.id.rawValue) == candidate.id, "candidate \(candidate.id)")
        }
    } catch {
        precondition(!error.reason.isEmpty)
    }
    return 0
}
