/// A YAML text that libyaml could not read, scan or parse, or that could not be composed into one
/// document; the texts are libyaml's own (`found undefined alias`, `mapping values are not
/// allowed in this context`, ...).
public struct YAMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stage that failed (libyaml's `yaml_error_type_t`, plus composing).
    public enum Code: String, Sendable, Hashable {
        /// libyaml could not allocate memory.
        case memory
        /// The input is not valid for the reader: bad UTF-8, a control character. ``YAMLError/offset`` says where.
        case reader
        /// The scanner failed (tokens: indentation, quotes, tabs).
        case scanner
        /// The parser failed (structure: missing `]`, a value where none may be).
        case parser
        /// Composing failed: an undefined alias, more than one document, nesting deeper than
        /// ``YAMLParser/maxDepth`` or more than ``YAMLParser/maxNodes`` nodes.
        case composer
    }

    /// What an error happened while doing, and where that began.
    public struct Context: Sendable, Equatable {
        /// libyaml's text, such as `while scanning a plain scalar`.
        public var text: String
        /// Where the context began.
        public var mark: YAMLMark

        /// Creates a context.
        public init(text: String, mark: YAMLMark) {
            self.text = text
            self.mark = mark
        }
    }

    /// The failing stage.
    public var code: Code
    /// libyaml's description of the problem (`found a tab character that violates indentation`).
    public var problem: String
    /// Where the problem is; `nil` for ``Code/memory`` and ``Code/reader`` errors (see ``offset``).
    public var mark: YAMLMark?
    /// What was being done, when libyaml says.
    public var context: Context?
    /// For ``Code/reader`` errors: the byte offset of the problem in the UTF-8 input.
    public var offset: Int?
    /// For ``Code/reader`` errors: the offending byte or character, when libyaml reports one.
    public var value: Int32?

    /// Creates an error.
    public init(
        code: Code, problem: String, mark: YAMLMark?, context: Context? = nil, offset: Int? = nil,
        value: Int32? = nil
    ) {
        self.code = code
        self.problem = problem
        self.mark = mark
        self.context = context
        self.offset = offset
        self.value = value
    }

    /// `line:column: problem (context at line L, column C)`, or `problem at byte N` for reader errors.
    public var description: String {
        var text = problem
        if let context { text += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))" }
        if let mark { return "\(mark): \(text)" }
        if let offset { return "\(text) at byte \(offset)" }
        return text
    }
}
