/// `${VAR}` expansion in configuration strings.
///
/// - `${VAR}`: the variable's value; an error when it is not set.
/// - `${VAR:-default}`: the default when the variable is unset or empty.
/// - `${VAR-default}`: the default only when the variable is unset.
/// - `$${`: a literal `${`.
///
/// A `$` not followed by `{` is kept as is.
public enum EnvironmentExpansion {
    /// Why a string could not be expanded.
    public struct Error: Swift.Error, Sendable, Hashable {
        /// Unicode-scalar offset of the `$` in the string.
        public var offset: Int
        /// What is wrong.
        public var message: String
        /// Whether the problem is an unset variable (rather than bad syntax).
        public var isUndefinedVariable: Bool
    }

    /// Expands every `${...}` in `text` from `environment`.
    public static func expand(_ text: String, environment: [String: String]) throws(EnvironmentExpansion.Error) -> String {
        guard text.utf8.contains(0x24) else { return text }  // no "$": nothing to do
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "$", index + 1 < scalars.count else {
                result.append(scalar)
                index += 1
                continue
            }
            if scalars[index + 1] == "$", index + 2 < scalars.count, scalars[index + 2] == "{" {
                result.append(contentsOf: ["$", "{"])
                index += 3
                continue
            }
            guard scalars[index + 1] == "{" else {
                result.append(scalar)
                index += 1
                continue
            }
            let start = index
            guard let close = scalars[(index + 2)...].firstIndex(of: "}") else {
                throw Error(offset: start, message: "unterminated '${' (expected '}')", isUndefinedVariable: false)
            }
            let body = scalars[(index + 2)..<close]
            var name = String.UnicodeScalarView()
            var cursor = body.startIndex
            while cursor < body.endIndex, isNameScalar(body[cursor], first: name.isEmpty) {
                name.append(body[cursor])
                cursor += 1
            }
            let variable = String(name)
            guard !variable.isEmpty else {
                throw Error(
                    offset: start, message: "invalid variable reference '${\(String(String.UnicodeScalarView(body)))}'",
                    isUndefinedVariable: false)
            }
            let value = environment[variable]
            let rest = body[cursor...]
            if rest.isEmpty {
                guard let value else {
                    throw Error(
                        offset: start, message: "environment variable '\(variable)' is not set (use ${\(variable):-default} for a default)",
                        isUndefinedVariable: true)
                }
                result.append(contentsOf: value.unicodeScalars)
            } else if rest.starts(with: [":", "-"]) {
                let fallback = rest.dropFirst(2)
                if let value, !value.isEmpty {
                    result.append(contentsOf: value.unicodeScalars)
                } else {
                    result.append(contentsOf: fallback)
                }
            } else if rest.first == "-" {
                let fallback = rest.dropFirst()
                if let value {
                    result.append(contentsOf: value.unicodeScalars)
                } else {
                    result.append(contentsOf: fallback)
                }
            } else {
                throw Error(
                    offset: start,
                    message: "invalid variable reference '${\(String(String.UnicodeScalarView(body)))}' (expected ${NAME} or ${NAME:-default})",
                    isUndefinedVariable: false)
            }
            index = close + 1
        }
        return String(result)
    }

    static func isNameScalar(_ scalar: Unicode.Scalar, first: Bool) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "_": return true
        case "0"..."9": return !first
        default: return false
        }
    }
}
