import CoverdBase
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    func parse(_ text: String) throws -> JSONNode {
        try JSONParser().parse(Array(text.utf8))
    }

    func error(_ bytes: [UInt8]) -> JSONSyntaxError? {
        do {
            _ = try JSONParser().parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("Given nested values, when parsed, then types and lines are kept")
    func parsesNestedValues() throws {
        let root = try parse("{\n \"a\": [1, -2.5e3, true, null],\n \"b\": \"x\\u00e9\\ud83d\\ude00\"\n}")
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members["a"]?.line == 2)
        #expect(members["a"]?.value == .array([
            JSONNode(.number("1"), line: 2), JSONNode(.number("-2.5e3"), line: 2),
            JSONNode(.bool(true), line: 2), JSONNode(.null, line: 2),
        ]))
        #expect(members["b"]?.value == .string("xé😀"))
    }

    @Test("Given a duplicate key, when parsed, then the last value wins")
    func duplicateKeyLastWins() throws {
        let root = try parse(#"{"a": 1, "a": 2}"#)
        #expect(root.value == .object(["a": JSONNode(.number("2"), line: 1)]))
    }

    @Test("Given 100,000 nested arrays, when parsed, then it fails on depth without crashing")
    func deepNestingIsAnError() {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 100_000) + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000)
        let failure = error(bytes)
        #expect(failure?.message.contains("nesting deeper") == true)
    }

    @Test("Given malformed input, when parsed, then the error names line and column", arguments: [
        ("{\"a\": }", "unexpected character"),
        ("[1, 2", "unexpected end of file"),
        ("{\"a\" 1}", "expected ':'"),
        ("[01]", "expected ',' or ']'"),
        ("[1.]", "invalid number"),
        ("\"\\x\"", "invalid escape"),
        ("\"\\ud800\"", "unpaired surrogate"),
        ("[1] [2]", "unexpected data after"),
        ("", "the file is empty"),
        ("tru", "unexpected end of file"),
    ])
    func malformedInputFails(text: String, expected: String) {
        let failure = error(Array(text.utf8))
        #expect(failure != nil)
        #expect(failure?.message.contains(expected) == true, "\(String(describing: failure)) for \(text)")
        #expect((failure?.line ?? 0) >= 1 && (failure?.column ?? 0) >= 1)
    }

    @Test("Given invalid UTF-8 or a raw NUL in a string, when parsed, then it is rejected", arguments: [
        [0x22, 0xC3, 0x28, 0x22] as [UInt8],  // bad continuation
        [0x22, 0xE0, 0x80, 0x80, 0x22],  // overlong
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
        [0x22, 0x61, 0x00, 0x62, 0x22],  // raw NUL
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // beyond U+10FFFF
    ])
    func invalidStringBytesAreRejected(bytes: [UInt8]) {
        #expect(error(bytes) != nil)
    }

    @Test("Given a second line error, when parsed, then the line is 2")
    func reportsLine() {
        let failure = error(Array("[\n  1,,\n]".utf8))
        #expect(failure?.line == 2)
        #expect(failure?.column == 5)
    }
}
