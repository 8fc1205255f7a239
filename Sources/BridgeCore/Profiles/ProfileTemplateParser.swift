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
        let source = try self.source(start..<bar, open: open)
        guard bar < close else {
            if source == .unix { return .init(source: .unix, conversion: .u32le, column: open) }
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
        if source == .unix, conversion.isChecksum {
            throw ProfileCodecError(
                .badTemplate, "{unix} is a number: it takes an integer conversion such as u32le, not \(conversion.rawValue)",
                column: bar + 2)
        }
        return .init(source: source, conversion: conversion, column: open)
    }

    /// `unix`, `options.NAME` or `NAME`.
    func source(_ range: Range<Int>, open: Int) throws(ProfileCodecError) -> ProfileTemplate.Source {
        let name = text(range)
        if name == "unix" { return .unix }
        var nameStart = range.lowerBound
        var isOption = false
        if let dot = range.first(where: { scalars[$0] == "." }) {
            guard text(range.lowerBound..<dot) == "options" else {
                throw ProfileCodecError(
                    .badTemplate,
                    "'\(name)' is not a source: write unix, options.NAME or a parameter name", column: range.lowerBound + 1)
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
