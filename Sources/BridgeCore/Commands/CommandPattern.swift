/// One entry of `commands.allow` (SPEC §8): `{device}/{service}/{characteristic}` topic segments,
/// each a glob with `*` and `?` (`thermostat/*/*`, `echo/custom/write`).
public struct CommandPattern: Sendable, Hashable, CustomStringConvertible {
    /// The device, service and characteristic globs.
    public let segments: [NamePattern]

    /// Parses `a/b/c`; nil unless it has exactly three non-empty segments.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        segments = parts.map { NamePattern(String($0)) }
    }

    /// Every characteristic: `*/*/*` (the default).
    public static let everything = CommandPattern("*/*/*")!

    /// Whether a command for these topic segments is allowed by this pattern.
    public func matches(device: String, service: String, characteristic: String) -> Bool {
        segments[0].matches(device) && segments[1].matches(service) && segments[2].matches(characteristic)
    }

    /// The pattern as written.
    public var description: String { segments.map(\.pattern).joined(separator: "/") }
}
