import CoverdModel
import CoverdRecords
import CoverdTestSupport
import Foundation
import Testing

@Suite("albums.bin archives")
struct ArchiveDecodingTests {
    let decoder = ArchiveRecordDecoder()

    @Test("Given an archive made by NSKeyedArchiver, when decoded, then every Album loads with its fields")
    func foundationArchive() throws {
        let data = try ArchiveFixture.archive([
            .init(title: "Best of Bowie", artist: "David Bowie", year: "1992", genre: "Pop", coverURL: "http://h/bowie.png"),
            .init(title: "It's My Life", artist: "No Doubt", year: "2003", genre: "Pop", coverURL: "http://h/nodoubt.png"),
        ])
        let contents = try decoder.decode([UInt8](data), record: "/r/albums.bin")
        #expect(contents.rejections.isEmpty)
        #expect(contents.albums.map(\.title) == ["Best of Bowie", "It's My Life"])
        #expect(contents.albums[0].artist == "David Bowie")
        #expect(contents.albums[0].year == "1992")
        #expect(contents.albums[0].genre == "Pop")
        #expect(contents.albums[1].coverURL?.string == "http://h/nodoubt.png")
        #expect(contents.albums[0].id == AlbumID.derived(artist: "David Bowie", title: "Best of Bowie"))
    }

    @Test("Given an archived album with a bad URL, when decoded, then only it is rejected")
    func badAlbumInArchive() throws {
        let data = try ArchiveFixture.archive([
            .init(title: "A", artist: "X", coverURL: "ftp://h/a.png"),
            .init(title: "B", artist: "X", coverURL: "http://h/b.png"),
        ])
        let contents = try decoder.decode([UInt8](data), record: "/r/albums.bin")
        #expect(contents.albums.map(\.title) == ["B"])
        #expect(contents.rejections.first?.position == "album 1")
    }

    @Test("Given broken archives, when decoded, then each fails with a reason and nothing traps")
    func brokenArchives() throws {
        let good = [UInt8](try ArchiveFixture.archive([.init(title: "A", artist: "X", coverURL: "http://h/a.png")]))
        var candidates: [[UInt8]] = [[], Array("bplist00".utf8), Array(good.prefix(good.count / 2)), Array("not a plist at all, just text".utf8)]
        // Every single-byte corruption of the trailer and a sample of the body.
        for offset in stride(from: 0, to: good.count, by: max(1, good.count / 64)) + Array(good.count - 32..<good.count) {
            var copy = good
            copy[offset] ^= 0xFF
            candidates.append(copy)
        }
        var failures = 0
        for bytes in candidates {
            do {
                _ = try decoder.decode(bytes, record: "/r/albums.bin")
            } catch {
                failures += 1
                #expect(error.description.hasPrefix("/r/albums.bin: not a valid album archive"))
            }
        }
        #expect(failures >= 4)
    }

    @Test("Given a plist whose root is not an array of albums, when decoded, then the file is refused")
    func wrongRoot() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode("just a string" as NSString, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        #expect(throws: RecordFileError.self) {
            try decoder.decode([UInt8](archiver.encodedData), record: "/r/albums.bin")
        }
    }
}
