/// A `--name <value>` option of a command, as ``CommandLineParser`` reads it and its help shows it.
///
/// Every option takes a value: `--name value`, `--name=value`, and, when it has a
/// ``shortName``, `-n value` and `-n=value`. A value given separately must not look like an
/// option (start with `-` and have more characters); `--name=-value` passes such a value.
public struct CommandLineOption: Sendable, Hashable {
    /// The values an option accepts.
    public enum Kind: Sendable, Hashable {
        /// Any text (including the empty string, when given as a separate argument).
        case text
        /// A finite number ≥ 0, as Swift's `Double(_:)` reads it (`10`, `0.5`, `1e1`).
        case nonNegativeNumber
        /// One of these words, matched case-insensitively; the parsed value is the word as listed here.
        case choice([String])
    }

    /// The long name without the dashes, e.g. `config` for `--config`.
    public var name: String
    /// The one-letter short name, e.g. `c` for `-c`, if the option has one.
    public var shortName: Character?
    /// The placeholder for the value in help and usage, without the angle brackets (e.g. `file`).
    public var valueName: String
    /// One or two sentences for the help.
    public var help: String
    /// The values the option accepts.
    public var kind: Kind
    /// The value when the option is not given (shown in the help as `(default: ...)`), if any.
    public var defaultValue: String?
    /// Whether the option may be given several times, each value kept (otherwise the last one wins).
    public var isRepeatable: Bool

    /// Creates an option description.
    public init(
        name: String, shortName: Character? = nil, valueName: String, help: String, kind: Kind = .text,
        defaultValue: String? = nil, isRepeatable: Bool = false
    ) {
        self.name = name
        self.shortName = shortName
        self.valueName = valueName
        self.help = help
        self.kind = kind
        self.defaultValue = defaultValue
        self.isRepeatable = isRepeatable
    }

    /// `--name`.
    public var longFlag: String { "--" + name }

    /// `-n`, if the option has a short name.
    public var shortFlag: String? { shortName.map { "-" + String($0) } }

    /// `--name <value>`, the form used in usage lines and error messages.
    public var synopsis: String { "\(longFlag) <\(valueName)>" }

    /// The option's label in the help: `-n, --name <value>` or `--name <value>`.
    public var helpLabel: String {
        if let shortFlag { return "\(shortFlag), \(synopsis)" }
        return synopsis
    }

    /// The option's help followed by its allowed values and its default, as the help prints it.
    public var fullHelp: String {
        var text = help
        if case .choice(let words) = kind { text += " (values: \(words.joined(separator: ", ")))" }
        if let defaultValue { text += " (default: \(defaultValue))" }
        return text
    }

    /// Checks a value given on the command line and returns it in its canonical form.
    ///
    /// - Returns: the value (for a ``Kind/choice(_:)``, the word as listed), or `nil` if the
    ///   option does not accept it.
    public func accept(_ value: String) -> String? {
        switch kind {
        case .text:
            return value
        case .nonNegativeNumber:
            guard let number = Double(value), number.isFinite, number >= 0 else { return nil }
            return value
        case .choice(let words):
            let lowered = value.lowercased()
            return words.first { $0.lowercased() == lowered }
        }
    }
}
