import Testing
import YAMLKit

/// Composing: the node tree, scalar styles and tags, marks, anchors and aliases.
struct YAMLParserTests {
    func compose(_ yaml: String) throws -> YAMLNode {
        let node = try YAMLParser.compose(yaml)
        return try #require(node)
    }

    @Test func nodeTreeKeepsOrderAndDuplicates() throws {
        let root = try compose("b: 1\na:\n  - x\n  - {k: v}\nb: 2\n")
        let mapping = try #require(root.mapping)
        #expect(mapping.entries.map { $0.key.scalar?.text } == ["b", "a", "b"])
        #expect(mapping.entries[0].value.scalar?.text == "1")
        #expect(mapping.entries[2].value.scalar?.text == "2")
        let list = try #require(mapping.entries[1].value.sequence)
        #expect(list.items.count == 2)
        #expect(list.items[0] == .scalar(YAMLScalar("x", mark: YAMLMark(line: 3, column: 5))))
        let inner = try #require(list.items[1].mapping)
        #expect(inner.entries == [
            YAMLMapping.Entry(
                key: .scalar(YAMLScalar("k", mark: YAMLMark(line: 4, column: 6))),
                value: .scalar(YAMLScalar("v", mark: YAMLMark(line: 4, column: 9)))),
        ])
        #expect(root.sequence == nil && root.scalar == nil)
    }

    @Test func nonScalarKeysAreKept() throws {
        let root = try compose("? [a, b]\n: c\n")
        let entry = try #require(root.mapping?.entries.first)
        #expect(entry.key.sequence?.items.compactMap { $0.scalar?.text } == ["a", "b"])
        #expect(entry.value.scalar?.text == "c")
    }

    @Test func scalarStyles() throws {
        let root = try compose(
            """
            plain: text here
            single: 'it''s'
            double: "tab\\there \\u00e9"
            literal: |
              line 1
              line 2
            folded: >
              word one
              word two
            empty:
            nul: "a\\0b"
            """)
        let values = try #require(root.mapping).entries.map { try #require($0.value.scalar) }
        #expect(values.map(\.style) == [.plain, .singleQuoted, .doubleQuoted, .literal, .folded, .plain, .doubleQuoted])
        #expect(values.map(\.text) == ["text here", "it's", "tab\there é", "line 1\nline 2\n", "word one word two\n", "", "a\u{0}b"])
    }

    @Test func tags() throws {
        let root = try compose("a: !!str 5\nb: !local x\nc: !!seq [1]\nd: !!map {}\ne: 5\nf: \"q\"\n")
        let entries = try #require(root.mapping).entries
        #expect(entries.map(\.value.tag) == [
            "tag:yaml.org,2002:str", "!local", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map", nil, nil,
        ])
        #expect(root.tag == nil)
    }

    @Test func marksAreOneBasedAndCountUnicodeScalars() throws {
        let root = try compose("# comment\nkey:   value\né: \"quoted\"\nlist:\n  - [a, b]\n")
        let entries = try #require(root.mapping).entries
        #expect(root.mark == YAMLMark(line: 2, column: 1))
        #expect(entries[0].key.mark == YAMLMark(line: 2, column: 1))
        #expect(entries[0].value.mark == YAMLMark(line: 2, column: 8))
        #expect(entries[1].key.mark == YAMLMark(line: 3, column: 1))
        #expect(entries[1].value.mark == YAMLMark(line: 3, column: 4))  // "é" is one column; at the quote
        let list = try #require(entries[2].value.sequence)
        #expect(list.mark == YAMLMark(line: 5, column: 3))  // the first "-"
        #expect(list.items[0].mark == YAMLMark(line: 5, column: 5))  // the "["
        #expect(list.items[0].sequence?.items[1].mark == YAMLMark(line: 5, column: 9))
        #expect(YAMLMark(line: 5, column: 9).description == "5:9")
    }

    @Test func emptyStreamsHaveNoRoot() throws {
        #expect(try YAMLParser.compose("") == nil)
        #expect(try YAMLParser.compose("# only a comment\n\n") == nil)
        let explicit = try compose("---\n")
        #expect(explicit == .scalar(YAMLScalar("", style: .plain, mark: YAMLMark(line: 2, column: 1))))
    }

    @Test func aliasesAreCopiesOfTheAnchoredNode() throws {
        let root = try compose("a: &list [1, 2]\nb: *list\nc: &s x\nd: *s\nc2: &s y\nd2: *s\n")
        let entries = try #require(root.mapping).entries
        #expect(entries[1].value == entries[0].value)
        #expect(entries[1].value.mark == YAMLMark(line: 1, column: 4))  // the anchored node's mark
        #expect(entries[3].value.scalar?.text == "x")
        #expect(entries[5].value.scalar?.text == "y")  // a redefined anchor replaces the old one
    }

    @Test func aliasToUndefinedOrUnfinishedAnchorFails() {
        #expect(throws: YAMLError(code: .composer, problem: "found undefined alias", mark: YAMLMark(line: 2, column: 4))) {
            try YAMLParser.compose("a: 1\nb: *nope\n")
        }
        // The anchored node is registered only once complete: no recursive structures.
        #expect(throws: YAMLError(code: .composer, problem: "found undefined alias", mark: YAMLMark(line: 1, column: 11))) {
            try YAMLParser.compose("a: &self [*self]\n")
        }
    }

    @Test func nestingPastTheLimitIsRefusedNotOverflowingTheStack() throws {
        // 64 levels compose; 65 do not, in flow and in block style. 4,000 levels (what crashed
        // the config fuzz target) fail the same way instead of overflowing the stack.
        let deepest = String(repeating: "[", count: YAMLParser.maxDepth) + String(repeating: "]", count: YAMLParser.maxDepth)
        var node = try #require(try YAMLParser.compose(deepest))
        var levels = 1
        while let inner = node.sequence?.items.first { node = inner; levels += 1 }
        #expect(levels == YAMLParser.maxDepth)
        let problem = "collections nested more than 64 deep"
        #expect(throws: YAMLError(code: .composer, problem: problem, mark: YAMLMark(line: 1, column: 65))) {
            try YAMLParser.compose(String(repeating: "[", count: 65) + String(repeating: "]", count: 65))
        }
        #expect(throws: YAMLError(code: .composer, problem: problem, mark: YAMLMark(line: 1, column: 65))) {
            try YAMLParser.compose(String(repeating: "[", count: 4000))
        }
        var block = ""
        for level in 0...64 { block += String(repeating: " ", count: level) + "k:\n" }
        #expect(throws: YAMLError(code: .composer, problem: problem, mark: YAMLMark(line: 65, column: 65))) {
            try YAMLParser.compose(block + String(repeating: " ", count: 65) + "k: v\n")
        }
    }

    @Test func aliasExpansionIsBounded() throws {
        // Each level repeats the one before ten times: 111,111 nodes in a4 from 200 bytes; the
        // eighth alias of a4 passes the budget.
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...4 {
            let previous = "*a\(level - 1)"
            text += "a\(level): &a\(level) [" + Array(repeating: previous, count: 10).joined(separator: ", ") + "]\n"
        }
        #expect(throws: YAMLError(
            code: .composer, problem: "more than 100000 nodes once aliases are expanded", mark: YAMLMark(line: 5, column: 45))
        ) {
            try YAMLParser.compose(text)
        }
        // Three levels (about 12,000 nodes) are still fine: aliases are legitimate YAML.
        let fewer = text.split(separator: "\n").prefix(4).joined(separator: "\n")
        let root = try #require(try YAMLParser.compose(fewer))
        #expect(root.mapping?.entries.count == 4)
    }

    @Test func secondDocumentIsRejected() {
        let expected = YAMLError(
            code: .composer, problem: "but found another document", mark: YAMLMark(line: 2, column: 1),
            context: .init(text: "expected a single document in the stream", mark: YAMLMark(line: 1, column: 1)))
        #expect(throws: expected) { try YAMLParser.compose("a: 1\n---\nb: 2\n") }
        #expect(throws: expected) { try YAMLParser.compose("a: 1\n--- x\n") }
        // One document with explicit markers is fine.
        #expect((try? YAMLParser.compose("---\na: 1\n...\n"))??.mapping?.entries.count == 1)
    }
}
