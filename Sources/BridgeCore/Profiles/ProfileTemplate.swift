/// The value of a profile's write step (SPEC §15), compiled once: hex bytes with `{...}`
/// placeholders, rendered into bytes for each run with a ``Context``.
///
/// Syntax: pairs of hex digits (either case), with spaces or tabs allowed between bytes, and
/// placeholders on byte boundaries:
/// - `{unix}`: the wall time passed in (whole Unix seconds), u32 little endian; another integer
///   conversion may be given (`{unix|u32be}`).
/// - `{options.NAME|conv}`: the device entry's `profile_options` value NAME; `crc32be`/`crc32le`
///   take its UTF-8 bytes, the integer conversions its decimal integer.
/// - `{NAME|conv}`: the command's parameter NAME (from its JSON payload): an integer (a JSON
///   number without a fraction) for the integer conversions, a string for the CRCs.
/// - `{now.FIELD}` (`year2 month day hour minute second`): the local date and time of the wall
///   time at ``Context/utcOffset``, u8 unless converted otherwise (an eQ-3's clock:
///   `03{now.year2}{now.month}{now.day}{now.hour}{now.minute}{now.second}`).
/// - `{xor8}`, `{xor8|from=N}`: one byte, the XOR of every byte rendered before it from offset N
///   (default 0): AM43's checksum, `00ff0000 9a0d01 {100-position|u8} {xor8|from=4}`.
///
/// Arithmetic (``ProfileAffine``): an integer source may be written
/// `[INT (+|-)] NAME [(*|/) INT] [(+|-) INT]`: `{100-position|u8}`, `{temperature*2|u8}`,
/// `{offset*2+7|u8}`, `{now.hour*2|u8}`. The result must be an exact integer in the
/// conversion's range; a parameter may then be a JSON number with a fraction (21.5 for
/// `{temperature*2|u8}`). The CRCs take no arithmetic.
///
/// Conversions (``ProfileConversion``): `u8 i8 u16le u16be i16le i16be u32le u32be i32le i32be
/// crc32be crc32le`. Names are letters, digits and `_`, not starting with a digit. The empty
/// template is zero bytes.
///
/// ```swift
/// let press = try ProfileTemplate("5711 {options.password|crc32be} 00")
/// try press.render(.init(unixTime: now, options: ["password": "1234"]))  // 57 11 9b e3 e0 a3 00
/// ```
public struct ProfileTemplate: Sendable, Hashable {
    /// Where a placeholder's value comes from.
    public enum Source: Sendable, Hashable {
        /// The wall time of the render.
        case unix
        /// A `profile_options` value.
        case option(String)
        /// A command parameter.
        case parameter(String)
        /// The XOR of the bytes rendered before it, from this offset (`{xor8|from=4}`).
        case xor8(from: Int)
        /// A part of the local date and time (`{now.hour}`).
        case now(ProfileLocalTime.Field)
    }

    /// The name of the checksum placeholder `{xor8}`: reserved, no parameter has it.
    static let xor8Name = "xor8"

    /// One `{...}` of the template.
    public struct Placeholder: Sendable, Hashable {
        /// Where its value comes from.
        public var source: Source
        /// How it becomes bytes.
        public var conversion: ProfileConversion
        /// 1-based column of its `{` in the template.
        public var column: Int
        /// Its arithmetic (`100-position`), `nil` when it has none.
        public var arithmetic: ProfileAffine? = nil
    }

    /// A run of fixed bytes or a placeholder, in order.
    enum Part: Sendable, Hashable {
        case bytes([UInt8])
        case placeholder(Placeholder)
    }

    /// What a render reads: nothing else (no clock, no environment).
    public struct Context: Sendable {
        /// The wall time: whole seconds since 1970-01-01 UTC (`BridgeClock.unixTime`).
        public var unixTime: Int64
        /// The local time's offset from UTC in seconds, east positive (`tm_gmtoff`): what
        /// `{now.*}` adds to ``unixTime``.
        public var utcOffset: Int32
        /// The device entry's `profile_options`.
        public var options: [String: String]
        /// The command's parameters (its JSON payload's members).
        public var parameters: [String: JSONValue]

        /// Creates a context.
        public init(
            unixTime: Int64, utcOffset: Int32 = 0, options: [String: String] = [:], parameters: [String: JSONValue] = [:]
        ) {
            self.unixTime = unixTime
            self.utcOffset = utcOffset
            self.options = options
            self.parameters = parameters
        }
    }

    /// The template as given.
    public let text: String
    let parts: [Part]
    /// The placeholders, in order.
    public let placeholders: [Placeholder]
    /// The command parameters it needs, in order of first use, each once.
    public let parameters: [String]
    /// The options it needs, in order of first use, each once.
    public let options: [String]
    /// The number of bytes every render gives.
    public let size: Int

    /// Compiles `text`.
    /// - Throws: ``ProfileCodecError/Code/badTemplate`` with the column in `text`: a character that
    ///   is neither a hex digit nor a placeholder, an odd number of hex digits, an unbalanced brace,
    ///   an empty or malformed placeholder or arithmetic, a missing or unknown conversion, an
    ///   `{xor8|from=N}` whose N is past the placeholder.
    public init(_ text: String) throws(ProfileCodecError) {
        var parser = ProfileTemplateParser(text)
        let parts = try parser.parse()
        var placeholders: [Placeholder] = []
        var parameters: [String] = []
        var options: [String] = []
        var size = 0
        for part in parts {
            switch part {
            case .bytes(let bytes):
                size += bytes.count
            case .placeholder(let placeholder):
                if case .xor8(let from) = placeholder.source, from > size {
                    throw ProfileCodecError(
                        .badTemplate, "{xor8|from=\(from)}: the checksum is at offset \(size), so from is at most \(size)",
                        column: placeholder.column)
                }
                placeholders.append(placeholder)
                size += placeholder.conversion.size
                switch placeholder.source {
                case .unix, .xor8, .now: break
                case .option(let name): if !options.contains(name) { options.append(name) }
                case .parameter(let name): if !parameters.contains(name) { parameters.append(name) }
                }
            }
        }
        self.text = text
        self.parts = parts
        self.placeholders = placeholders
        self.parameters = parameters
        self.options = options
        self.size = size
    }

    /// The bytes of this template in `context`.
    /// - Throws: ``ProfileCodecError`` ``Code/missingParameter`` / ``Code/invalidParameter`` (the
    ///   command's payload is wrong: SPEC §4 `invalid_payload`, see
    ///   ``ProfileCodecError/commandErrorCode``), ``Code/missingOption`` / ``Code/invalidOption``,
    ///   ``Code/invalidTime`` (a wall time the conversion cannot hold). The message names the
    ///   parameter or option and says why.
    public func render(_ context: Context) throws(ProfileCodecError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for part in parts {
            switch part {
            case .bytes(let fixed):
                bytes.append(contentsOf: fixed)
            case .placeholder(let placeholder):
                try Self.append(placeholder, context, to: &bytes)
            }
        }
        return bytes
    }

    static func append(_ placeholder: Placeholder, _ context: Context, to bytes: inout [UInt8]) throws(ProfileCodecError) {
        let conversion = placeholder.conversion
        switch placeholder.source {
        case .unix:
            try appendTime(context.unixTime, "unix", placeholder, to: &bytes)
        case .now(let field):
            guard let local = ProfileLocalTime(unixTime: context.unixTime, utcOffset: context.utcOffset) else {
                throw ProfileCodecError(
                    .invalidTime, "the wall time \(context.unixTime) at UTC offset \(context.utcOffset) s has no date")
            }
            try appendTime(local[field], "now.\(field.rawValue)", placeholder, to: &bytes)
        case .xor8(let from):
            var checksum: UInt8 = 0
            for byte in bytes[min(from, bytes.count)...] { checksum ^= byte }
            bytes.append(checksum)
        case .option(let name) where placeholder.arithmetic != nil:
            try appendOptionArithmetic(name, placeholder, context, to: &bytes)
        case .parameter(let name) where placeholder.arithmetic != nil:
            try appendParameterArithmetic(name, placeholder, context, to: &bytes)
        case .option(let name):
            guard let value = context.options[name] else {
                throw ProfileCodecError(
                    .missingOption, "option '\(name)' is not set: add it to the device's profile_options")
            }
            if conversion.isChecksum {
                conversion.append(Int64(CRC32.checksum(value.utf8)), to: &bytes)
                return
            }
            guard let integer = Int64(value), conversion.range.contains(integer) else {
                throw ProfileCodecError(
                    .invalidOption,
                    "option '\(name)' is \"\(value)\": \(conversion.rawValue) takes an integer in \(rangeText(conversion))")
            }
            conversion.append(integer, to: &bytes)
        case .parameter(let name):
            guard let value = context.parameters[name] else {
                throw ProfileCodecError(
                    .missingParameter,
                    "parameter '\(name)' is missing: the command's payload needs it (\(expected(conversion)))")
            }
            if conversion.isChecksum {
                guard case .string(let text) = value else {
                    throw ProfileCodecError(
                        .invalidParameter, "parameter '\(name)' is \(describe(value)): \(expected(conversion))")
                }
                conversion.append(Int64(CRC32.checksum(text.utf8)), to: &bytes)
                return
            }
            guard let integer = value.int64Value else {
                throw ProfileCodecError(
                    .invalidParameter, "parameter '\(name)' is \(describe(value)): \(expected(conversion))")
            }
            guard conversion.range.contains(integer) else {
                throw ProfileCodecError(
                    .invalidParameter,
                    "parameter '\(name)' is \(integer): out of range for \(conversion.rawValue) (\(rangeText(conversion)))")
            }
            conversion.append(integer, to: &bytes)
        }
    }

    /// A number as its JSON text, anything else by its kind: `40.5`, `a string`, `an array`, `null`.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .integer, .number: return value.jsonString
        case .null: return "null"
        case .array, .object: return "an \(value.kindName)"
        default: return "a \(value.kindName)"
        }
    }

    static func expected(_ conversion: ProfileConversion) -> String {
        conversion.isChecksum
            ? "\(conversion.rawValue) takes a string"
            : "\(conversion.rawValue) takes an integer in \(rangeText(conversion))"
    }

    static func rangeText(_ conversion: ProfileConversion) -> String {
        "\(conversion.range.lowerBound)…\(conversion.range.upperBound)"
    }
}
