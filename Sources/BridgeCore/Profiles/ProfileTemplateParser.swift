/// Parses the text of a ``ProfileTemplate`` into its parts; columns are 1-based, in Unicode scalars.
struct ProfileTemplateParser {
    let scalars: [Unicode.Scalar]
    var index = 0
    var parts: [ProfileTemplate.Part] = []
    var run: [UInt8] = []
    /// The high nibble of a byte whose second digit has not come yet, and its column.
    var pending: (nibble: UInt8, column: Int)?

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    mutating func parse() throws(ProfileCodecError) -> [ProfileTemplate.Part] {
        while index < scalars.count {
            let scalar = scalars[index]
            let column = index + 1
            if scalar == " " || scalar == "\t" {
                try endOfByte(before: "a space")
                index += 1
            } else if scalar.isASCII, let nibble = Hex.value(of: UInt8(scalar.value)) {
                if let high = pending {
                    run.append(high.nibble << 4 | nibble)
                    pending = nil
                } else {
                    pending = (nibble, column)
                }
                index += 1
            } else if scalar == "{" {
                try endOfByte(before: "a placeholder")
                if !run.isEmpty {
                    parts.append(.bytes(run))
                    run = []
                }
                let found = try self.placeholder()
                parts.append(.placeholder(found))
            } else if scalar == "}" {
                throw ProfileCodecError(.badTemplate, "'}' without a '{' before it", column: column)
            } else {
                throw ProfileCodecError(
                    .badTemplate,
                    "'\(scalar)' is neither a hex digit nor a placeholder such as {position|u8}", column: column)
            }
        }
        try endOfByte(before: "the end")
        if !run.isEmpty { parts.append(.bytes(run)) }
        return parts
    }

    /// Refuses a byte cut after its first digit.
    func endOfByte(before what: String) throws(ProfileCodecError) {
        guard let high = pending else { return }
        throw ProfileCodecError(
            .badTemplate, "odd number of hex digits: the byte at this column has one digit before \(what)",
            column: high.column)
    }

    /// The placeholder starting at `index` (its `{`); leaves `index` after its `}`.
    mutating func placeholder() throws(ProfileCodecError) -> ProfileTemplate.Placeholder {
        let open = index + 1
        var close = index + 1
        while close < scalars.count, scalars[close] != "}" {
            if scalars[close] == "{" {
                throw ProfileCodecError(
                    .badTemplate, "'{' inside the placeholder opened at column \(open)", column: close + 1)
            }
            close += 1
        }
        guard close < scalars.count else {
            throw ProfileCodecError(.badTemplate, "'{' is never closed: add '}'", column: open)
        }
        let start = index + 1
        index = close + 1
        guard start < close else {
            throw ProfileCodecError(
                .badTemplate, "empty placeholder: write {unix}, {options.NAME|crc32be} or {PARAMETER|u8}", column: open)
        }
        var bar = start
        while bar < close, scalars[bar] != "|" { bar += 1 }
        if text(start..<bar) == ProfileTemplate.xor8Name {
            return .init(source: .xor8(from: try xor8Start(bar..<close)), conversion: .u8, column: open)
        }
        let (source, arithmetic) = try expression(start..<bar)
        guard bar < close else {
            switch source {
            case .unix: return .init(source: source, conversion: .u32le, column: open, arithmetic: arithmetic)
            case .now: return .init(source: source, conversion: .u8, column: open, arithmetic: arithmetic)
            default: break
            }
            throw ProfileCodecError(
                .badTemplate,
                "{\(text(start..<bar))} needs a conversion, such as {\(text(start..<bar))|u8} (conversions: \(ProfileConversion.names))",
                column: open)
        }
        let conversionRange = bar + 1..<close
        if let second = conversionRange.first(where: { scalars[$0] == "|" }) {
            throw ProfileCodecError(.badTemplate, "a placeholder takes one conversion", column: second + 1)
        }
        guard let conversion = ProfileConversion(rawValue: text(conversionRange)) else {
            let name = text(conversionRange)
            throw ProfileCodecError(
                .badTemplate,
                name.isEmpty
                    ? "a conversion name is missing after '|' (conversions: \(ProfileConversion.names))"
                    : "unknown conversion '\(name)' (conversions: \(ProfileConversion.names))",
                column: bar + 2)
        }
        if conversion.isChecksum {
            switch source {
            case .unix, .now:
                throw ProfileCodecError(
                    .badTemplate,
                    "{\(text(start..<bar))} is a number: it takes an integer conversion such as u8 or u32le, not \(conversion.rawValue)",
                    column: bar + 2)
            default:
                break
            }
            if let arithmetic {
                throw ProfileCodecError(
                    .badTemplate,
                    "\(arithmetic.text) is arithmetic: it takes an integer conversion such as u8, not \(conversion.rawValue)",
                    column: bar + 2)
            }
        }
        return .init(source: source, conversion: conversion, column: open, arithmetic: arithmetic)
    }

    /// The `from=N` of `{xor8|from=N}` (0 without it); `range` starts at the `|` or is empty.
    func xor8Start(_ range: Range<Int>) throws(ProfileCodecError) -> Int {
        guard let bar = range.first else { return 0 }
        let prefix = "from="
        let argument = text(bar + 1..<range.upperBound)
        guard argument.hasPrefix(prefix) else {
            throw ProfileCodecError(
                .badTemplate,
                "{xor8} is the XOR of the bytes before it: it takes no conversion, only an offset such as {xor8|from=4}",
                column: bar + 2)
        }
        let digitsStart = bar + 1 + prefix.count
        let (value, end) = try integer(at: digitsStart, upTo: range.upperBound, after: "from=")
        guard end == range.upperBound else {
            throw ProfileCodecError(.badTemplate, "from= takes a byte offset such as 4", column: end + 1)
        }
        return Int(value)
    }

    /// `[INT (+|-)] NAME [(*|/) INT] [(+|-) INT]`: the source and its arithmetic (`nil` when there
    /// is none).
    func expression(_ range: Range<Int>) throws(ProfileCodecError) -> (ProfileTemplate.Source, ProfileAffine?) {
        var position = range.lowerBound
        var negate = false
        var offset: Int64 = 0
        var hasArithmetic = false
        if position < range.upperBound, ProfileStructLayout.digit(scalars[position]) != nil {
            let (constant, end) = try integer(at: position, upTo: range.upperBound, after: "")
            guard end < range.upperBound, scalars[end] == "+" || scalars[end] == "-" else {
                throw ProfileCodecError(
                    .badTemplate,
                    "'\(scalars[position])' in a name: names are letters, digits and '_', not starting with a digit",
                    column: position + 1)
            }
            offset = constant
            negate = scalars[end] == "-"
            hasArithmetic = true
            position = end + 1
            guard position < range.upperBound, !Self.isOperator(scalars[position]) else {
                throw ProfileCodecError(.badTemplate, "a name is missing after '\(scalars[end])'", column: position + 1)
            }
        }
        var nameEnd = position
        while nameEnd < range.upperBound, !Self.isOperator(scalars[nameEnd]) { nameEnd += 1 }
        let source = try self.source(position..<nameEnd)
        position = nameEnd
        var numerator: Int64 = 1
        var denominator: Int64 = 1
        if position < range.upperBound, scalars[position] == "*" || scalars[position] == "/" {
            let op = scalars[position]
            let (factor, end) = try integer(at: position + 1, upTo: range.upperBound, after: "'\(op)'")
            guard factor != 0 else {
                throw ProfileCodecError(
                    .badTemplate, op == "/" ? "division by zero" : "a factor of 0 makes every value 0",
                    column: position + 2)
            }
            if op == "*" { numerator = factor } else { denominator = factor }
            hasArithmetic = true
            position = end
        }
        if position < range.upperBound, scalars[position] == "+" || scalars[position] == "-" {
            let op = scalars[position]
            guard position + 1 < range.upperBound, ProfileStructLayout.digit(scalars[position + 1]) != nil else {
                throw ProfileCodecError(
                    .badTemplate, "'\(op)' in a name: names are letters, digits and '_', not starting with a digit",
                    column: position + 1)
            }
            let (constant, end) = try integer(at: position + 1, upTo: range.upperBound, after: "'\(op)'")
            let (sum, overflow) = offset.addingReportingOverflow(op == "-" ? -constant : constant)
            guard !overflow else {
                throw ProfileCodecError(.badTemplate, "the constant is too large", column: position + 2)
            }
            offset = sum
            hasArithmetic = true
            position = end
        }
        if position < range.upperBound {
            throw ProfileCodecError(
                .badTemplate,
                "unexpected '\(scalars[position])': arithmetic is [NUMBER+ or -]NAME[* or /NUMBER][+ or -NUMBER], "
                    + "such as {100-position|u8} or {offset*2+7|u8}",
                column: position + 1)
        }
        if hasArithmetic, case .xor8 = source {
            throw ProfileCodecError(.badTemplate, "{xor8} takes no arithmetic", column: range.lowerBound + 1)
        }
        guard hasArithmetic else { return (source, nil) }
        let affine = ProfileAffine(
            negate: negate, numerator: numerator, denominator: denominator, offset: offset, text: text(range))
        return (source, affine)
    }

    /// The decimal integer at `start` (at least one digit) and the index after it.
    func integer(at start: Int, upTo end: Int, after what: String) throws(ProfileCodecError) -> (Int64, Int) {
        var position = start
        var value: Int64 = 0
        while position < end, let digit = ProfileStructLayout.digit(scalars[position]) {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(Int64(digit))
            guard !o1, !o2, next <= Self.maxConstant else {
                throw ProfileCodecError(.badTemplate, "the number is too large", column: start + 1)
            }
            value = next
            position += 1
        }
        guard position > start else {
            throw ProfileCodecError(
                .badTemplate, what.isEmpty ? "a number is missing" : "\(what) needs a whole number after it",
                column: start + 1)
        }
        return (value, position)
    }

    /// The largest constant of a placeholder's arithmetic.
    static let maxConstant: Int64 = 1 << 53

    static func isOperator(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "+" || scalar == "-" || scalar == "*" || scalar == "/"
    }

    /// `unix`, `xor8`, `now.FIELD`, `options.NAME` or `NAME`.
    func source(_ range: Range<Int>) throws(ProfileCodecError) -> ProfileTemplate.Source {
        let name = text(range)
        if name == "unix" { return .unix }
        if name == ProfileTemplate.xor8Name { return .xor8(from: 0) }
        var nameStart = range.lowerBound
        var isOption = false
        if let dot = range.first(where: { scalars[$0] == "." }) {
            let prefix = text(range.lowerBound..<dot)
            if prefix == "now" {
                let field = text(dot + 1..<range.upperBound)
                guard let known = ProfileLocalTime.Field(rawValue: field) else {
                    throw ProfileCodecError(
                        .badTemplate, "'now.\(field)' is not a date or time: now.FIELD takes \(ProfileLocalTime.Field.names)",
                        column: dot + 2)
                }
                return .now(known)
            }
            guard prefix == "options" else {
                throw ProfileCodecError(
                    .badTemplate,
                    "'\(name)' is not a source: write unix, now.FIELD, options.NAME or a parameter name",
                    column: range.lowerBound + 1)
            }
            isOption = true
            nameStart = dot + 1
        }
        guard nameStart < range.upperBound else {
            throw ProfileCodecError(
                .badTemplate, isOption ? "an option name is missing after 'options.'" : "a name is missing before '|'",
                column: nameStart + 1)
        }
        for position in nameStart..<range.upperBound {
            let scalar = scalars[position]
            let letter = scalar == "_" || (scalar.isASCII && (scalar.properties.isAlphabetic))
            let digit = ProfileStructLayout.digit(scalar) != nil
            guard letter || (digit && position > nameStart) else {
                throw ProfileCodecError(
                    .badTemplate,
                    "'\(scalar)' in a name: names are letters, digits and '_', not starting with a digit",
                    column: position + 1)
            }
        }
        let identifier = text(nameStart..<range.upperBound)
        return isOption ? .option(identifier) : .parameter(identifier)
    }

    func text(_ range: Range<Int>) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[range])
        return text
    }
}
