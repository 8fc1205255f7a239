/// Small helpers shared by the command payload parsers.
enum CommandPayload {
    /// The largest payload the parsers look at (the JSON parser's limit, 1 MiB).
    static let maxSize = JSONParser.defaultMaxSize

    /// The index of the first byte that is not JSON whitespace, or `nil` when there is none.
    static func firstNonWhitespace(_ bytes: [UInt8]) -> Int? {
        bytes.firstIndex { !isWhitespace($0) }
    }

    /// JSON whitespace: space, tab, line feed, carriage return.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Whether the first non-whitespace byte is `{`: the payload is meant as a JSON object.
    static func looksLikeObject(_ bytes: [UInt8]) -> Bool {
        guard let start = firstNonWhitespace(bytes) else { return false }
        return bytes[start] == 0x7B
    }

    /// A key quoted for a message, shortened when long so messages stay small.
    static func quoted(_ key: String) -> String {
        let limit = 40
        var result = "\""
        var count = 0
        for character in key.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            // Keep messages single-line and readable: escape control characters.
            if character.value < 0x20 || character == "\"" || character == "\\" {
                result += character.escaped(asASCII: true)
            } else {
                result.unicodeScalars.append(character)
            }
            count += 1
        }
        return result + "\""
    }
}
