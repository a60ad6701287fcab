@testable import CoverdLookup
import Testing

@Suite("Lucene queries")
struct LuceneQueryTests {
    @Test("Given a name with every Lucene special character, when made a phrase, then each is escaped with a backslash inside the quotes")
    func everySpecialCharacterEscaped() {
        let phrase = LuceneQuery.phrase(#"+ - && || ! ( ) { } [ ] ^ " ~ * ? : \ /"#)
        #expect(phrase == #""\+ \- \&\& \|\| \! \( \) \{ \} \[ \] \^ \" \~ \* \? \: \\ \/""#)
    }

    @Test("Given an artist and a title, when a release-group search is made, then both are quoted phrases joined by AND")
    func releaseGroupSearch() {
        #expect(LuceneQuery.releaseGroup(artist: "AC/DC", title: "Back in Black") == #"artist:"AC\/DC" AND releasegroup:"Back in Black""#)
    }

    @Test("Given a query with spaces, accents and reserved characters, when percent-encoded, then only unreserved characters stay as they are")
    func percentEncoding() {
        #expect(LuceneQuery.percentEncoded(#"artist:"Sigur Rós" & a~b"#) == "artist%3A%22Sigur%20R%C3%B3s%22%20%26%20a~b")
    }
}
