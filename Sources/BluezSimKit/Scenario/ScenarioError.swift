/// A scenario file that cannot be used, with the position of the problem.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The file could not be read.
        case unreadable
        /// Not valid YAML.
        case syntax
        /// Valid YAML, but not a valid scenario.
        case invalid
    }

    /// The kind of problem.
    public var code: Code
    /// The scenario file.
    public var file: String
    /// 1-based line, 0 when unknown.
    public var line: Int
    /// 1-based column, 0 when unknown.
    public var column: Int
    /// A human-readable message.
    public var message: String

    /// Creates an error.
    public init(code: Code, file: String, line: Int = 0, column: Int = 0, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: message`.
    public var description: String {
        line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)"
    }
}
