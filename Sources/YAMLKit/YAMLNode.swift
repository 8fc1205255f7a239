/// A node of a composed YAML document: a scalar, a mapping or a sequence.
///
/// Aliases are resolved while composing: an alias is a copy of the node its anchor names,
/// with that node's mark.
public enum YAMLNode: Sendable, Equatable {
    /// A scalar (`text`, `'text'`, `"text"`, `|`, `>`).
    case scalar(YAMLScalar)
    /// A mapping, its entries in document order.
    case mapping(YAMLMapping)
    /// A sequence, its items in document order.
    case sequence(YAMLSequence)

    /// Where the node starts.
    public var mark: YAMLMark {
        switch self {
        case .scalar(let scalar): scalar.mark
        case .mapping(let mapping): mapping.mark
        case .sequence(let sequence): sequence.mark
        }
    }

    /// The node's explicit tag as libyaml resolves it (`!!str` is `tag:yaml.org,2002:str`), if any.
    public var tag: String? {
        switch self {
        case .scalar(let scalar): scalar.tag
        case .mapping(let mapping): mapping.tag
        case .sequence(let sequence): sequence.tag
        }
    }

    /// The scalar, when the node is one.
    public var scalar: YAMLScalar? {
        if case .scalar(let scalar) = self { return scalar }
        return nil
    }

    /// The mapping, when the node is one.
    public var mapping: YAMLMapping? {
        if case .mapping(let mapping) = self { return mapping }
        return nil
    }

    /// The sequence, when the node is one.
    public var sequence: YAMLSequence? {
        if case .sequence(let sequence) = self { return sequence }
        return nil
    }
}
