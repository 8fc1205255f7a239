import CYAML

/// Composes YAML text into a ``YAMLNode`` tree with libyaml (YAML 1.1).
///
/// Composing follows libyaml's event stream: scalars, sequences and mappings become nodes with
/// the mark of their first event; an alias becomes a copy of the node last anchored under its
/// name (an alias to an unknown or not yet complete anchor is an error). No tag or type is
/// resolved: every scalar stays text.
///
/// Two limits keep hostile input from exhausting the stack or memory of whoever walks the tree:
/// nodes nest at most ``maxDepth`` deep, and a document holds at most ``maxNodes`` nodes once
/// its aliases are expanded (a "billion laughs" document is refused, not expanded).
public enum YAMLParser {
    /// How deep collections may nest (the root is depth 1). A configuration needs fewer than 10.
    public static let maxDepth = 64
    /// How many nodes a document may hold, counting every node an alias repeats.
    public static let maxNodes = 100_000

    /// Composes the single document of `yaml`.
    ///
    /// - Returns: the document's root node, or `nil` when the text holds no document (empty,
    ///   only comments).
    /// - Throws: ``YAMLError``: libyaml's reader, scanner or parser error, an undefined alias
    ///   (`found undefined alias`, code ``YAMLError/Code/composer``), or a second document
    ///   (`but found another document` at the start of the second document, context
    ///   `expected a single document in the stream` at 1:1, code ``YAMLError/Code/composer``).
    public static func compose(_ yaml: String) throws(YAMLError) -> YAMLNode? {
        var bytes = Array(yaml.utf8)
        let count = bytes.count
        bytes.append(0)  // so that even an empty text has a valid pointer
        let result = bytes.withUnsafeBufferPointer { buffer -> Result<YAMLNode?, YAMLError> in
            guard let base = buffer.baseAddress else {
                return .failure(YAMLError(code: .memory, problem: "no input buffer", mark: nil))
            }
            let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
            defer { parser.deallocate() }
            guard yaml_parser_initialize(parser) == 1 else {
                return .failure(YAMLError(code: .memory, problem: "cannot allocate the parser", mark: nil))
            }
            defer { yaml_parser_delete(parser) }
            yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(parser, base, count)
            var composer = Composer(parser: parser)
            do throws(YAMLError) {
                return .success(try composer.singleDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// One pass over libyaml's events, building nodes.
private struct Composer {
    let parser: UnsafeMutablePointer<yaml_parser_t>
    /// Completed anchored nodes by anchor name, with how many nodes each holds.
    var anchors: [String: (node: YAMLNode, size: Int)] = [:]
    /// Nodes composed so far, aliases counted at the size of what they repeat.
    var nodes = 0
    /// How many collections enclose the node being composed.
    var depth = 0

    init(parser: UnsafeMutablePointer<yaml_parser_t>) {
        self.parser = parser
    }

    /// The root of the stream's only document, or `nil` for an empty stream.
    mutating func singleDocument() throws(YAMLError) -> YAMLNode? {
        _ = try next()  // STREAM-START
        let first = try next()
        guard first.type != YAML_STREAM_END_EVENT else { return nil }
        // `first` is the DOCUMENT-START of the first document.
        let root = try node(from: try next())
        _ = try next()  // DOCUMENT-END
        let following = try next()
        guard following.type == YAML_STREAM_END_EVENT else {
            throw YAMLError(
                code: .composer, problem: "but found another document", mark: following.mark,
                context: .init(text: "expected a single document in the stream", mark: YAMLMark(line: 1, column: 1)))
        }
        return root
    }

    mutating func node(from event: Event) throws(YAMLError) -> YAMLNode {
        let before = nodes
        switch event.type {
        case YAML_ALIAS_EVENT:
            guard let anchor = event.anchor, let anchored = anchors[anchor] else {
                throw YAMLError(code: .composer, problem: "found undefined alias", mark: event.mark)
            }
            try count(anchored.size, event)
            return anchored.node
        case YAML_SCALAR_EVENT:
            try count(1, event)
            return register(.scalar(YAMLScalar(event.value, style: event.style, tag: event.tag, mark: event.mark)), event, since: before)
        case YAML_SEQUENCE_START_EVENT:
            try enter(event)
            defer { depth -= 1 }
            var items: [YAMLNode] = []
            var item = try next()
            while item.type != YAML_SEQUENCE_END_EVENT {
                items.append(try node(from: item))
                item = try next()
            }
            return register(.sequence(YAMLSequence(items, tag: event.tag, mark: event.mark)), event, since: before)
        case YAML_MAPPING_START_EVENT:
            try enter(event)
            defer { depth -= 1 }
            var entries: [YAMLMapping.Entry] = []
            var key = try next()
            while key.type != YAML_MAPPING_END_EVENT {
                let keyNode = try node(from: key)
                let valueNode = try node(from: try next())
                entries.append(YAMLMapping.Entry(key: keyNode, value: valueNode))
                key = try next()
            }
            return register(.mapping(YAMLMapping(entries, tag: event.tag, mark: event.mark)), event, since: before)
        default:
            // libyaml only starts a node with one of the events above.
            throw YAMLError(code: .composer, problem: "unexpected event \(event.type.rawValue)", mark: event.mark)
        }
    }

    /// Counts a collection's start against the node budget and the nesting limit.
    mutating func enter(_ event: Event) throws(YAMLError) {
        try count(1, event)
        depth += 1
        guard depth <= YAMLParser.maxDepth else {
            throw YAMLError(
                code: .composer, problem: "collections nested more than \(YAMLParser.maxDepth) deep", mark: event.mark)
        }
    }

    /// Adds `size` nodes to the document's count, failing past the budget.
    mutating func count(_ size: Int, _ event: Event) throws(YAMLError) {
        nodes += size
        guard nodes <= YAMLParser.maxNodes else {
            throw YAMLError(
                code: .composer, problem: "more than \(YAMLParser.maxNodes) nodes once aliases are expanded",
                mark: event.mark)
        }
    }

    /// Records a completed node under its anchor (a later anchor of the same name replaces it),
    /// with the nodes composed for it since `before`.
    mutating func register(_ node: YAMLNode, _ event: Event, since before: Int) -> YAMLNode {
        if let anchor = event.anchor { anchors[anchor] = (node, nodes - before) }
        return node
    }

    /// The next event, copied out of libyaml's.
    mutating func next() throws(YAMLError) -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw currentError() }
        defer { yaml_event_delete(&event) }
        return Event(event)
    }

    /// The parser's error as a ``YAMLError``.
    func currentError() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unknown error"
        switch state.error {
        case YAML_MEMORY_ERROR:
            return YAMLError(code: .memory, problem: "cannot allocate memory", mark: nil)
        case YAML_READER_ERROR:
            return YAMLError(
                code: .reader, problem: problem, mark: nil, offset: Int(state.problem_offset),
                value: state.problem_value == -1 ? nil : state.problem_value)
        default:
            let code: YAMLError.Code =
                switch state.error {
                case YAML_SCANNER_ERROR: .scanner
                case YAML_PARSER_ERROR: .parser
                default: .composer
                }
            let context = state.context.map {
                YAMLError.Context(text: String(cString: $0), mark: YAMLMark(state.context_mark))
            }
            return YAMLError(code: code, problem: problem, mark: YAMLMark(state.problem_mark), context: context)
        }
    }
}

/// The parts of a `yaml_event_t` the composer uses.
private struct Event {
    var type: yaml_event_type_t
    var mark: YAMLMark
    var anchor: String?
    var tag: String?
    var value: String = ""
    var style: YAMLScalar.Style = .plain

    init(_ event: yaml_event_t) {
        type = event.type
        mark = YAMLMark(event.start_mark)
        switch event.type {
        case YAML_ALIAS_EVENT:
            anchor = string(event.data.alias.anchor)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            anchor = string(scalar.anchor)
            tag = string(scalar.tag)
            // A scalar may hold NUL characters: use the length, not the terminator.
            value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            style =
                switch scalar.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: .literal
                case YAML_FOLDED_SCALAR_STYLE: .folded
                default: .plain
                }
        case YAML_SEQUENCE_START_EVENT:
            let start = event.data.sequence_start
            anchor = string(start.anchor)
            tag = start.implicit != 0 ? nil : string(start.tag)
        case YAML_MAPPING_START_EVENT:
            let start = event.data.mapping_start
            anchor = string(start.anchor)
            tag = start.implicit != 0 ? nil : string(start.tag)
        default:
            break
        }
    }
}

private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
    guard let pointer else { return nil }
    return String(cString: pointer)
}

extension YAMLMark {
    /// From libyaml's 0-based mark.
    fileprivate init(_ mark: yaml_mark_t) {
        self.init(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }
}
