@testable import CoverdRecords
import CoverdTestSupport
import Foundation
import Testing

@Suite("Record tree")
struct RecordTreeTests {
    let directory = TestDirectory()

    @Test("Given record files scanned once and unchanged since, when the tree is scanned again, then each file is stated once and no change is reported")
    func unchangedFilesAreStatedOnce() throws {
        // Given
        for index in 0..<5 {
            try writeAtomically(
                #"{"title": "T\#(index)", "artist": "A", "cover_url": "http://h/\#(index).png"}"#,
                to: directory.path + "/\(index).json")
        }
        var tree = try RecordTree(root: directory.path, reader: RecordFileReader(limits: RecordLimits()))
        var first = RecordTreeOutput()
        tree.scan(force: false, into: &first)
        tree.endBatch()
        #expect(first.change.upserted.count == 5)
        let before = tree.signaturesTaken

        // When
        var again = RecordTreeOutput()
        tree.scan(force: false, into: &again)

        // Then
        #expect(tree.signaturesTaken - before == 5)
        #expect(again.change.isEmpty)
    }
}
