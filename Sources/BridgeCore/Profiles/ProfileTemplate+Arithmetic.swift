/// The sources of a ``ProfileTemplate`` placeholder that take arithmetic (``ProfileAffine``):
/// the wall time, the local date and time, options and parameters.
extension ProfileTemplate {
    /// Appends a time value (`{unix}`, `{now.hour}`) through the placeholder's arithmetic.
    /// - Throws: ``ProfileCodecError/Code/invalidTime`` when the result does not fit.
    static func appendTime(
        _ value: Int64, _ name: String, _ placeholder: Placeholder, to bytes: inout [UInt8]
    ) throws(ProfileCodecError) {
        let conversion = placeholder.conversion
        let written = placeholder.arithmetic?.text ?? name
        let result = placeholder.arithmetic?.apply(mantissa: value) ?? .value(value)
        guard case .value(let integer) = result, conversion.range.contains(integer)
        else {
            let what = name == "unix" ? "the wall time \(value)" : "\(name) = \(value)"
            throw ProfileCodecError(.invalidTime, "\(what) does not fit {\(written)|\(conversion.rawValue)}")
        }
        conversion.append(integer, to: &bytes)
    }

    /// Appends an option's decimal integer through the placeholder's arithmetic.
    /// - Throws: ``ProfileCodecError/Code/missingOption``, ``ProfileCodecError/Code/invalidOption``.
    static func appendOptionArithmetic(
        _ name: String, _ placeholder: Placeholder, _ context: Context, to bytes: inout [UInt8]
    ) throws(ProfileCodecError) {
        guard let arithmetic = placeholder.arithmetic else { return }
        let conversion = placeholder.conversion
        guard let value = context.options[name] else {
            throw ProfileCodecError(
                .missingOption, "option '\(name)' is not set: add it to the device's profile_options")
        }
        guard let integer = Int64(value) else {
            throw ProfileCodecError(
                .invalidOption, "option '\(name)' is \"\(value)\": \(arithmetic.text) takes an integer")
        }
        switch arithmetic.apply(mantissa: integer) {
        case .value(let result) where conversion.range.contains(result):
            conversion.append(result, to: &bytes)
        case .value(let result):
            throw ProfileCodecError(
                .invalidOption,
                "option '\(name)' is \(value): \(arithmetic.text) is \(result), out of range for \(conversion.rawValue) (\(rangeText(conversion)))")
        case .notIntegral:
            throw ProfileCodecError(
                .invalidOption, "option '\(name)' is \(value): \(arithmetic.text) is not a whole number")
        case .overflow:
            throw ProfileCodecError(
                .invalidOption,
                "option '\(name)' is \(value): \(arithmetic.text) is out of range for \(conversion.rawValue) (\(rangeText(conversion)))")
        }
    }

    /// Appends a parameter (a JSON number, a fraction allowed when the result is whole) through the
    /// placeholder's arithmetic.
    /// - Throws: ``ProfileCodecError/Code/missingParameter``, ``ProfileCodecError/Code/invalidParameter``
    ///   (SPEC §4 `invalid_payload`).
    static func appendParameterArithmetic(
        _ name: String, _ placeholder: Placeholder, _ context: Context, to bytes: inout [UInt8]
    ) throws(ProfileCodecError) {
        guard let arithmetic = placeholder.arithmetic else { return }
        let conversion = placeholder.conversion
        let expected = "\(arithmetic.text) takes a number and gives an integer in \(rangeText(conversion)) for \(conversion.rawValue)"
        guard let value = context.parameters[name] else {
            throw ProfileCodecError(
                .missingParameter, "parameter '\(name)' is missing: the command's payload needs it (\(expected))")
        }
        guard let (mantissa, digits) = ProfileAffine.decimal(value) else {
            throw ProfileCodecError(.invalidParameter, "parameter '\(name)' is \(describe(value)): \(expected)")
        }
        switch arithmetic.apply(mantissa: mantissa, digits: digits) {
        case .value(let result) where conversion.range.contains(result):
            conversion.append(result, to: &bytes)
        case .value(let result):
            throw ProfileCodecError(
                .invalidParameter,
                "parameter '\(name)' is \(describe(value)): \(arithmetic.text) is \(result), out of range for \(conversion.rawValue) (\(rangeText(conversion)))")
        case .notIntegral:
            throw ProfileCodecError(
                .invalidParameter,
                "parameter '\(name)' is \(describe(value)): \(arithmetic.text) is not a whole number, which \(conversion.rawValue) needs")
        case .overflow:
            throw ProfileCodecError(
                .invalidParameter,
                "parameter '\(name)' is \(describe(value)): \(arithmetic.text) is out of range for \(conversion.rawValue) (\(rangeText(conversion)))")
        }
    }
}
