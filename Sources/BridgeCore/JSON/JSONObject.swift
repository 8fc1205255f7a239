/// The members of a JSON object, in order.
///
/// Lookups are linear, which is the fastest choice for the handful of members
/// the bridge's payloads have. Repeated keys are kept; lookup returns the last.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member: a key and its value.
    public struct Member: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in order.
    public var members: [Member]

    /// Creates an object from members.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// Creates an object from key/value pairs, in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    /// The position of the first member.
    public var startIndex: Int { members.startIndex }
    /// The position after the last member.
    public var endIndex: Int { members.endIndex }
    /// The member at `position`.
    public subscript(position: Int) -> Member { members[position] }

    /// The value of the last member named `key`; setting replaces the last such member's value,
    /// or appends a member; setting `nil` removes every member named `key`.
    public subscript(key: String) -> JSONValue? {
        get {
            var index = members.count - 1
            while index >= 0 {
                if members[index].key == key { return members[index].value }
                index -= 1
            }
            return nil
        }
        set {
            guard let newValue else {
                members.removeAll { $0.key == key }
                return
            }
            if let index = members.lastIndex(where: { $0.key == key }) {
                members[index].value = newValue
            } else {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Appends a member without looking for an existing one with the same key.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    /// Removes every member named `key`.
    public mutating func removeAll(key: String) {
        members.removeAll { $0.key == key }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }
}
