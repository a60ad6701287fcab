// libFuzzer target: album records, both forms (JSON and albums.bin), from any bytes.
// Built by scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address` together with
// the record layer it exercises; see `make fuzz`.
import CoverdModel
import CoverdRecords

@_cdecl("LLVMFuzzerTestOneInput")
public func recordsFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = RecordLimits()
    limits.maxFileBytes = 1 << 20
    let validator = AlbumValidator(limits: limits)
    for decode in [JSONRecordDecoder(validator: validator).decode, ArchiveRecordDecoder(validator: validator).decode] {
        do throws(RecordFileError) {
            let contents = try decode(bytes, "/fuzz/record")
            for album in contents.albums {
                // What reaches the rest of the daemon must be safe to use as a file name and a URL.
                precondition(AlbumID.isValid(album.id.rawValue), "invalid id \(album.id)")
                if let url = album.coverURL {
                    let scheme = url.string.prefix { $0 != ":" }.lowercased()
                    precondition(scheme == "http" || scheme == "https", "scheme \(scheme)")
                    precondition(url.string.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
                }
                // Ids go into request paths: only the canonical UUID form may reach them.
                for id in [album.releaseID, album.releaseGroupID].compactMap({ $0 }) {
                    precondition(MusicBrainzID(id.rawValue) != nil && id.rawValue.utf8.count == 36, "id \(id)")
                }
                precondition(!album.title.isEmpty && !album.artist.isEmpty)
            }
        } catch {
            precondition(!error.description.isEmpty)
        }
    }
    return 0
}
