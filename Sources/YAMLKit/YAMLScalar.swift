/// A scalar node: its text as written (after YAML's quoting and folding rules), style, tag and mark.
///
/// No type is resolved: `42`, `true` and `~` are all text; the style tells a plain `null` from a
/// quoted `"null"`.
public struct YAMLScalar: Sendable, Equatable {
    /// How a scalar is written.
    public enum Style: Sendable, Hashable {
        /// `text`
        case plain
        /// `'text'`
        case singleQuoted
        /// `"text"`
        case doubleQuoted
        /// `|` block
        case literal
        /// `>` block
        case folded
    }

    /// The scalar's value.
    public var text: String
    /// How it is written.
    public var style: Style
    /// Its explicit tag (`tag:yaml.org,2002:str` for `!!str`), if any.
    public var tag: String?
    /// Where it starts (for a quoted or block scalar: at the quote or indicator).
    public var mark: YAMLMark

    /// Creates a scalar.
    public init(_ text: String, style: Style = .plain, tag: String? = nil, mark: YAMLMark) {
        self.text = text
        self.style = style
        self.tag = tag
        self.mark = mark
    }
}
