/// What kind of JSON value a profile decode publishes under a name: Home Assistant picks the
/// entity by it (a sensor, a binary sensor, a text sensor).
public enum ProfileValueKind: String, Sendable, Hashable {
    /// A number (integers, floats, scales, masks without `?`).
    case number
    /// A boolean (`?`, masks with `?`).
    case bool
    /// Text (`s`, or an integer with a map: a name, or the integer a map does not name).
    case text

    /// The kind of `item`'s value after `transform`.
    init(_ item: ProfileStructLayout.Item, _ transform: ProfileFieldTransform) {
        switch (item.kind, transform) {
        case (.bool, _), (_, .bits(_, true)): self = .bool
        case (.text, _), (_, .map): self = .text
        default: self = .number
        }
    }
}

extension ProfileStruct {
    /// The values it may publish with their kinds, in the order of ``valueNames``.
    public var valueKinds: [(name: String, kind: ProfileValueKind)] {
        if let repeating, let field = fields.first, let item = layout.items.first {
            guard field.isPublished else { return [] }
            let kind = ProfileValueKind(item, field.transform)
            return (1...repeating.limit).map { ("\(field.name)_\($0)", kind) }
        }
        var kinds: [(name: String, kind: ProfileValueKind)] = []
        for index in fields.indices {
            let item = layout.items[index]
            if fields[index].isPublished { kinds.append((fields[index].name, ProfileValueKind(item, fields[index].transform))) }
            for value in derived[index] where value.isPublished {
                kinds.append((value.name, ProfileValueKind(item, value.transform)))
            }
        }
        return kinds
    }
}

extension ProfileDecode {
    /// The values it may publish with their kinds, each name once (the first struct's kind), in
    /// the order of ``valueNames``.
    public var valueKinds: [(name: String, kind: ProfileValueKind)] {
        var seen = Set<String>()
        var kinds: [(name: String, kind: ProfileValueKind)] = []
        for s in structs {
            for value in s.valueKinds where seen.insert(value.name).inserted { kinds.append(value) }
        }
        return kinds
    }
}
