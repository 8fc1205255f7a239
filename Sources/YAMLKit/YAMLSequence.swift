/// A sequence node: its items in document order.
public struct YAMLSequence: Sendable, Equatable {
    /// The items.
    public var items: [YAMLNode]
    /// Its explicit tag, if any.
    public var tag: String?
    /// Where it starts (the first `-` of a block sequence, the `[` of a flow sequence).
    public var mark: YAMLMark

    /// Creates a sequence.
    public init(_ items: [YAMLNode], tag: String? = nil, mark: YAMLMark) {
        self.items = items
        self.tag = tag
        self.mark = mark
    }
}
