import Testing
import YAMLKit

/// libyaml's errors: stage, problem, context and marks as libyaml reports them.
struct YAMLErrorTests {
    func failure(_ yaml: String) -> YAMLError? {
        do {
            _ = try YAMLParser.compose(yaml)
            return nil
        } catch {
            return error
        }
    }

    @Test func scannerErrorCarriesProblemAndContext() throws {
        let error = try #require(failure("mqtt:\n  url: mqtt://localhost\n\tbase_topic: x\n"))
        #expect(error.code == .scanner)
        #expect(error.problem == "found a tab character that violates indentation")
        #expect(error.mark == YAMLMark(line: 3, column: 1))
        #expect(error.context == .init(text: "while scanning a plain scalar", mark: YAMLMark(line: 2, column: 8)))
        #expect(error.offset == nil && error.value == nil)
        #expect(
            error.description
                == "3:1: found a tab character that violates indentation (while scanning a plain scalar at line 2, column 8)")
    }

    @Test func parserErrors() throws {
        let unclosed = try #require(failure("mqtt: {url: mqtt://x\n"))
        #expect(unclosed.code == .parser)
        #expect(unclosed.problem == "did not find expected ',' or '}'")
        #expect(unclosed.mark?.line == 2)
        #expect(unclosed.context?.text == "while parsing a flow mapping")
        #expect(unclosed.context?.mark == YAMLMark(line: 1, column: 7))

        let value = try #require(failure("a: b: c\n"))
        #expect(value.code == .scanner)
        #expect(value.problem == "mapping values are not allowed in this context")
        #expect(value.mark == YAMLMark(line: 1, column: 5))
        #expect(value.context == nil)
        #expect(value.description == "1:5: mapping values are not allowed in this context")
    }

    @Test func unclosedQuote() throws {
        let error = try #require(failure("a: \"open\n"))
        #expect(error.code == .scanner)
        #expect(error.problem == "found unexpected end of stream")
        #expect(error.context == .init(text: "while scanning a quoted scalar", mark: YAMLMark(line: 1, column: 4)))
    }

    @Test func readerErrorCarriesByteOffsetAndValue() throws {
        let error = try #require(failure("é: x\u{1}\n"))
        #expect(error.code == .reader)
        #expect(error.problem == "control characters are not allowed")
        #expect(error.offset == 5)  // bytes: "é" is two
        #expect(error.value == 1)
        #expect(error.mark == nil && error.context == nil)
        #expect(error.description == "control characters are not allowed at byte 5")
    }

    @Test func undefinedAnchorInKeyPosition() throws {
        let error = try #require(failure("? *k\n: v\n"))
        #expect(error == YAMLError(code: .composer, problem: "found undefined alias", mark: YAMLMark(line: 1, column: 3)))
    }
}
