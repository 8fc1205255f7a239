#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a configuration's defaults come from on this machine: the process environment (for `${VAR}`) and the host
/// name (for the default client id and bridge id). Reading the file itself is ConfigLoader's (`BridgeConfig.load`).
extension BridgeConfig {
    /// This process's environment variables (`environ`); for a name given twice, the last (as
    /// Foundation's `ProcessInfo`).
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        // `environ` is imported as non-optional, but clearenv(3) may leave it NULL.
        guard var entry = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>(bitPattern: Int(bitPattern: environ)) else {
            return result
        }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                result[name] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// This machine's host name (`gethostname`), or `"localhost"` when unavailable.
    public static func currentHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}
