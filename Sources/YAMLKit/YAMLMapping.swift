/// A mapping node: its key/value pairs in document order, duplicates kept.
///
/// Keys may be any node (`? [a, b]: c` has a sequence key); checking them is up to the reader.
public struct YAMLMapping: Sendable, Equatable {
    /// One key/value pair.
    public struct Entry: Sendable, Equatable {
        /// The key.
        public var key: YAMLNode
        /// The value.
        public var value: YAMLNode

        /// Creates an entry.
        public init(key: YAMLNode, value: YAMLNode) {
            self.key = key
            self.value = value
        }
    }

    /// The pairs in document order.
    public var entries: [Entry]
    /// Its explicit tag, if any.
    public var tag: String?
    /// Where it starts (the first key of a block mapping, the `{` of a flow mapping).
    public var mark: YAMLMark

    /// Creates a mapping.
    public init(_ entries: [Entry], tag: String? = nil, mark: YAMLMark) {
        self.entries = entries
        self.tag = tag
        self.mark = mark
    }
}
