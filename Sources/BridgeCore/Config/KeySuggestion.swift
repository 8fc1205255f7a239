/// "Did you mean" suggestions for misspelled keys and names.
package enum KeySuggestion {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo.
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        // A clear prefix ("heart_rate" for "heart_rate_measurement") is a likely intent.
        if lowered.count >= 3 {
            let prefixed = candidates.filter { $0.hasPrefix(lowered) }
            if prefixed.count == 1 { return prefixed[0] }
        }
        var best: (candidate: String, distance: Int)? = nil
        for candidate in candidates {
            let distance = editDistance(Array(lowered.unicodeScalars), Array(candidate.unicodeScalars))
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let limit = max(2, best.candidate.unicodeScalars.count / 3)
        return best.distance <= limit ? best.candidate : nil
    }

    /// Levenshtein distance (insertions, deletions, substitutions; a swap of neighbours counts 1).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
