@testable import CoverdBase
@testable import CoverdFetch
import CoverdTestSupport
import Foundation
import Testing

/// What every TLS connection is told to trust: one file, so that libcurl parses it once.
@Suite("Trusted authorities")
struct TrustedAuthoritiesTests {
    @Test("Given ca_file, when the authorities are set up, then they name one sealed in-memory file holding the system bundle and then ca_file")
    func caFileFollowsTheSystemBundle() throws {
        // Given
        let directory = TestDirectory()
        let caFile = directory.file("extra.pem")
        try writeAtomically("-----BEGIN CERTIFICATE-----\nextra\n-----END CERTIFICATE-----\n", to: caFile)
        let system = try #require(CurlGlobal.defaultCABundle)

        let files = CABundleFiles()

        // When
        let authorities = try TrustedAuthorities(caFile: caFile, files: files)

        // Then: the file lives as long as `files`
        defer { withExtendedLifetime(files) {} }
        let file = try #require(authorities.file)
        #expect(file.hasPrefix("/proc/self/fd/"), "\(file)")
        #expect(readBytes(file) == (readBytes(system) ?? []) + [0x0A] + (readBytes(caFile) ?? []))
        #expect(authorities.notes.isEmpty, "\(authorities.notes)")
        let fd = open(file, O_RDWR)
        defer { if fd >= 0 { close(fd) } }
        // Root may open it for writing despite its mode; the seal refuses the write itself.
        #expect(fd < 0 || write(fd, "x", 1) < 0, "its bytes cannot change")
    }

    @Test("Given ca_file read again unchanged (a reload), then the same file is named; given it changed, another one")
    func sameBundleSameFile() throws {
        // Given
        let directory = TestDirectory()
        let caFile = directory.file("extra.pem")
        try writeAtomically("first\n", to: caFile)
        let files = CABundleFiles()
        let first = try TrustedAuthorities(caFile: caFile, files: files)

        // When
        let again = try TrustedAuthorities(caFile: caFile, files: files)
        try writeAtomically("second\n", to: caFile)
        let changed = try TrustedAuthorities(caFile: caFile, files: files)

        // Then: libcurl keys its parsed store by the name, so an unchanged bundle keeps it
        #expect(again.file == first.file)
        #expect(changed.file != first.file)
        #expect(readBytes(try #require(first.file))?.suffix(6) == Array("first\n".utf8), "the earlier file lives on")
        #expect(readBytes(try #require(changed.file))?.suffix(7) == Array("second\n".utf8))
        withExtendedLifetime(files) {}
    }

    @Test("Given no ca_file, when the authorities are set up, then they name libcurl's own bundle, as a file")
    func systemBundleAlone() throws {
        let authorities = try TrustedAuthorities(caFile: nil, files: CABundleFiles())
        #expect(authorities.file == CurlGlobal.defaultCABundle)
        #expect(!authorities.directoryOnly)
        #expect(authorities.notes.isEmpty)
    }

    @Test("Given no ca_file and no system bundle file where libcurl expects one, when the authorities are set up, then no file is named and the bundle is to be cleared, so libcurl's CA directory alone is trusted, and a note says why")
    func missingSystemBundleLeavesDefaults() throws {
        // Given
        let directory = TestDirectory()
        let missing = directory.file("ca-certificates.crt")

        // When
        let authorities = try TrustedAuthorities(caFile: nil, files: CABundleFiles(), systemBundle: missing)

        // Then
        #expect(authorities.file == nil)
        #expect(authorities.directoryOnly)
        #expect(authorities.notes.count == 1)
        #expect(authorities.notes.first?.contains(missing) == true, "\(authorities.notes)")
    }

    @Test("Given a ca_file that is missing or a directory, when the authorities are set up, then the error names ca_file, its path and the errno")
    func unreadableCAFile() throws {
        let directory = TestDirectory()
        #expect(throws: SystemError("read ca_file", path: directory.file("missing.pem"), code: ENOENT)) {
            try TrustedAuthorities(caFile: directory.file("missing.pem"), files: CABundleFiles())
        }
        #expect(throws: SystemError("read ca_file", path: directory.path, code: EINVAL)) {
            try TrustedAuthorities(caFile: directory.path, files: CABundleFiles())
        }
    }
}
