/// A device-name pattern of a `devices[].match.name` entry: `*` matches any
/// run of characters (also none), `?` exactly one; everything else matches
/// itself, case-sensitively. `"Polar H10*"` matches `"Polar H10 A1B2C3D4"`.
public struct NamePattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public let pattern: String
    let scalars: [Unicode.Scalar]

    /// Creates a pattern.
    public init(_ pattern: String) {
        self.pattern = pattern
        self.scalars = Array(pattern.unicodeScalars)
    }

    /// Whether the pattern has no wildcard (matches exactly one name).
    public var isLiteral: Bool { !scalars.contains("*") && !scalars.contains("?") }

    /// Whether `name` matches the pattern.
    public func matches(_ name: String) -> Bool {
        let text = Array(name.unicodeScalars)
        // Iterative glob matching with single-star backtracking: O(n·m) worst case, no recursion.
        var p = 0
        var t = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < scalars.count, scalars[p] == "?" || (scalars[p] != "*" && scalars[p] == text[t]) {
                p += 1
                t += 1
            } else if p < scalars.count, scalars[p] == "*" {
                starP = p
                starT = t
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    /// The pattern as written.
    public var description: String { pattern }
}
