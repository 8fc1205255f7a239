/// How a device's services resolve after it connects (control `SetResolveBehaviour`).
public enum ResolveBehaviour: Sendable, Equatable, CustomStringConvertible {
    /// The scenario's resolve: `ServicesResolved` after `resolve_delay` (`resolve_delay_cached` on a
    /// reconnect), the GATT objects after it (first resolve) or before it (`gatt_objects_first`).
    case normal
    /// As ``normal``, with `ServicesResolved` after this delay instead.
    case delayed(Duration)
    /// `ServicesResolved` becomes true after `resolve_delay`, the GATT objects appear this much later.
    /// GATT objects are dropped on every disconnect in this mode, so each connection shows it.
    case resolvedBeforeGatt(Duration)
    /// `Connected` becomes true, services never resolve.
    case neverResolve

    /// Parses `normal`, `delayed:DURATION`, `resolved-before-gatt[:DURATION]` (default 1 s), `never-resolve`.
    public static func parse(_ text: String) -> ResolveBehaviour? {
        let parts = text.trimmingSpaces().split(separator: ":", maxSplits: 1).map { String($0).trimmingSpaces() }
        guard let mode = parts.first else { return nil }
        let arg = parts.count > 1 ? DurationText.parse(parts[1]) : nil
        if parts.count > 1 && arg == nil { return nil }
        switch mode {
        case "normal" where parts.count == 1: return .normal
        case "delayed": return arg.map { .delayed($0) }
        case "resolved-before-gatt": return .resolvedBeforeGatt(arg ?? .seconds(1))
        case "never-resolve" where parts.count == 1: return .neverResolve
        default: return nil
        }
    }

    /// The text ``parse(_:)`` accepts.
    public var description: String {
        switch self {
        case .normal: return "normal"
        case .delayed(let d): return "delayed:\(d)"
        case .resolvedBeforeGatt(let d): return "resolved-before-gatt:\(d)"
        case .neverResolve: return "never-resolve"
        }
    }
}
