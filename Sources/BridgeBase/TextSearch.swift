/// Substring search on UTF-8 bytes, for the few places that look for text in text.
///
/// The standard library's `contains(_:)`, `firstRange(of:)`, `replacing(_:with:)` and
/// `split(separator:)` with a string argument live in `_StringProcessing`, which brings
/// `libswift_StringProcessing` and `libswift_RegexParser` into the process for nothing else
/// (issue 12: RSS). These do the same for what the bridge needs: exact, byte-wise matches.
extension StringProtocol {
    /// The first range where `target` occurs (byte-wise), or nil; an empty target is found at the start.
    public func range(ofText target: some StringProtocol) -> Range<Index>? {
        let needle = Array(target.utf8)
        guard let first = needle.first else { return startIndex..<startIndex }
        let bytes = utf8
        var i = bytes.startIndex
        while i != bytes.endIndex {
            if bytes[i] == first {
                var j = i, k = 0
                while k < needle.count, j != bytes.endIndex, bytes[j] == needle[k] {
                    j = bytes.index(after: j)
                    k += 1
                }
                if k == needle.count { return i..<j }
            }
            i = bytes.index(after: i)
        }
        return nil
    }

    /// Whether `target` occurs in the text (byte-wise).
    public func includes(_ target: some StringProtocol) -> Bool { range(ofText: target) != nil }

    /// The text with every occurrence of `target` (non-empty) replaced by `replacement`.
    public func replacingText(_ target: some StringProtocol, with replacement: some StringProtocol) -> String {
        guard !target.isEmpty else { return String(self) }
        var result = ""
        var rest = self[...]
        while let range = rest.range(ofText: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}
