import BridgeCore
import ConfigLoader

/// The device profile targets (SPEC §15, issue 31).
///
/// `profile`: the input is a profile file's text, through ``ProfileCatalog/parseProfile(yaml:fileName:)``.
/// A refusal must name the file and carry a message; a profile it accepts must then run: every
/// decode over the input's bytes, every write step rendered (``ProfileDecodeFuzzing/exercise(_:payload:)``).
///
/// `profile-decode` (``ProfileDecodeFuzzing``): codecs built from fuzzed text, and the shipped
/// profiles' codecs over fuzzed payloads.
enum ProfileFuzzing {
    static let fileName = "fuzz.yaml"

    static func load(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do throws(ConfigError) {
            let profile = try ProfileCatalog.parseProfile(yaml: text, fileName: fileName)
            precondition(!profile.id.isEmpty, "a profile without an id was accepted")
            ProfileDecodeFuzzing.exercise(profile, payload: bytes)
        } catch {
            for refusal in error.all {
                precondition(refusal.file == fileName, "a refusal names \(refusal.file), not the file: \(refusal)")
                precondition(!refusal.message.isEmpty, "a refusal without a message at \(refusal.line):\(refusal.column)")
                precondition(refusal.line >= 0 && refusal.column >= 0, "a refusal at a negative position: \(refusal)")
            }
        }
    }
}

/// The `profile-decode` target. Byte 0 selects: bits 0-1 the mode; the other bits options of the
/// mode. The rest is split at its first newline (0x0A) into a text (the header) and the payload;
/// without a newline both are the rest. Whatever the mode, every decode of every shipped profile
/// runs over the payload.
///
/// - mode 0, a struct: the header is `FORMAT|T1|T2|...`, a struct format (``ProfileStructLayout``)
///   and the transforms of its fields in order (``ProfileFieldTransform/parse(_:)``, none when
///   missing); bit 2: `absent_if: [0, -1]` on its integer fields; bit 3: `valid: -1000…1000` on
///   its numbers; bit 4: bits (`&0x01?`, `&0x80`, `100-x`) of its first integer field; bit 5: a
///   repetition, limit byte 0 >> 6 plus 1. The struct decodes the payload.
/// - mode 1, a template: the header is a write template (``ProfileTemplate``), rendered with
///   parameters, options and a wall time read from the payload.
/// - mode 2, the shipped profiles' write steps and commands, rendered with parameters and options
///   read from the payload, and their `expect` answers for the payload.
/// - mode 3, a first-byte dispatch: the header is its keys, comma separated (``ProfileFirstByte``);
///   it looks up the payload.
///
/// Nothing may trap; a struct that compiled decodes every payload at least its size, into values
/// it names in ``ProfileStruct/valueNames`` that survive a JSON round trip (numbers finite); a
/// render gives ``ProfileTemplate/size`` bytes; a refusal carries a message.
enum ProfileDecodeFuzzing {
    static let shipped: [DeviceProfile] = {
        guard let catalog = try? ProfileCatalog.shipped() else { preconditionFailure("the shipped profiles do not load") }
        return catalog.profiles.keys.sorted().compactMap { catalog.profiles[$0] }
    }()

    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        let header: String
        let payload: [UInt8]
        if let newline = rest.firstIndex(of: 0x0A) {
            header = String(decoding: rest[..<newline], as: UTF8.self)
            payload = Array(rest[(newline + 1)...])
        } else {
            header = String(decoding: rest, as: UTF8.self)
            payload = rest
        }
        for profile in shipped {
            for name in profile.decodes.keys.sorted() { check(profile.decodes[name]!, payload) }
        }
        switch selector & 0x03 {
        case 0: structure(header, payload, selector: selector)
        case 1: template(header, payload)
        case 2:
            for profile in shipped { exercise(profile, payload: payload) }
        default: firstByte(header, payload)
        }
    }

    /// A profile's decodes over `payload`, its write steps rendered with parameters and options
    /// read from it, its commands' answers for it.
    static func exercise(_ profile: DeviceProfile, payload: [UInt8]) {
        for name in profile.decodes.keys.sorted() { check(profile.decodes[name]!, payload) }
        var reader = Reader(payload)
        var options: [String: String] = [:]
        for name in profile.options.keys.sorted() where reader.byte() & 1 == 1 { options[name] = reader.text() }
        let binding = DeviceProfileBinding(profile: profile, options: options)
        let context = reader.context(options: options)
        for step in binding.steps { render(step, context) }
        for command in binding.commands {
            var parameters: [String: JSONValue] = [:]
            for name in command.parameterNames { parameters[name] = reader.json() }
            var commandContext = context
            commandContext.parameters = parameters
            for step in command.steps { render(step, commandContext) }
            if let expect = command.expect {
                do throws(ProfileCodecError) {
                    _ = try expect.answer(for: payload)
                } catch {
                    refused(error)
                }
            }
        }
    }

    static func render(_ step: ProfileStep, _ context: ProfileTemplate.Context) {
        guard case .write(_, let template, _) = step.action else { return }
        render(template, context)
    }

    static func render(_ template: ProfileTemplate, _ context: ProfileTemplate.Context) {
        do throws(ProfileCodecError) {
            let bytes = try template.render(context)
            precondition(bytes.count == template.size, "\"\(template.text)\" rendered \(bytes.count) bytes, not \(template.size)")
        } catch {
            refused(error)
        }
    }

    /// A decode over `payload`: a refusal carries a message; decoded values are named, finite and
    /// survive JSON; a struct takes any payload of its size.
    static func check(_ decode: ProfileDecode, _ payload: [UInt8]) {
        let result: Result<JSONObject, ProfileCodecError>
        do throws(ProfileCodecError) {
            result = .success(try decode.decode(payload))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let values):
            let names = Set(decode.valueNames)
            for member in values {
                precondition(names.contains(member.key), "decoded '\(member.key)', which is not among \(decode.valueNames)")
                checkFinite(member.value, name: member.key)
            }
            let text = JSONValue.object(values).jsonBytes
            precondition((try? JSONParser.parse(text)) == .object(values), "decoded values do not round-trip through JSON: \(values)")
        case .failure(let error):
            refused(error)
            if case .structure(let s) = decode {
                precondition(payload.count < s.size, "struct \"\(s.layout.format)\" refused \(payload.count) bytes: \(error)")
            }
        }
    }

    static func checkFinite(_ value: JSONValue, name: String) {
        switch value {
        case .number(let number): precondition(number.isFinite, "\(name) is not finite")
        case .array(let elements): for element in elements { checkFinite(element, name: name) }
        case .object(let object): for member in object { checkFinite(member.value, name: name + "." + member.key) }
        case .null, .bool, .integer, .string: break
        }
    }

    static func refused(_ error: ProfileCodecError) {
        precondition(!error.message.isEmpty, "a refusal without a message: \(error.code)")
        precondition(error.column >= 0, "a refusal at a negative column: \(error)")
    }

    /// Mode 0: a struct from the header's format and transforms.
    static func structure(_ header: String, _ payload: [UInt8], selector: UInt8) {
        let parts = header.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let layout: ProfileStructLayout
        do throws(ProfileCodecError) {
            layout = try ProfileStructLayout(parts[0])
        } catch {
            refused(error)
            precondition(error.column <= parts[0].unicodeScalars.count + 1, "column \(error.column) is past \"\(parts[0])\"")
            return
        }
        precondition(layout.size <= ProfileStructLayout.maxSize, "a layout of \(layout.size) bytes")
        var fields: [ProfileStruct.Field] = []
        for (index, item) in layout.items.enumerated() {
            let transformText = index + 1 < parts.count ? parts[index + 1] : ""
            var field = ProfileStruct.Field("f\(index + 1)")
            do throws(ProfileCodecError) {
                field.transform = try ProfileFieldTransform.parse(transformText)
            } catch {
                refused(error)
            }
            if selector & 0x04 != 0, item.isInteger { field.absentIf = [0, -1] }
            if selector & 0x08 != 0, item.isInteger || item.isFloatingPoint { field.valid = -1000...1000 }
            fields.append(field)
        }
        var bits: [ProfileStruct.Bits] = []
        if selector & 0x10 != 0, let index = layout.items.firstIndex(where: \.isInteger) {
            bits.append(
                .init(
                    field: fields[index].name,
                    values: [.init("b1", .bits(mask: 0x01, asBool: true)), .init("b2", .bits(mask: 0x80, asBool: false)),
                             .init("b3", .subtractedFrom(100))]))
        }
        let repeating = selector & 0x20 != 0 ? ProfileStruct.Repeat(limit: Int(selector >> 6) + 1) : nil
        do throws(ProfileCodecError) {
            let compiled = try ProfileStruct(layout: layout, fields: fields, bits: bits, repeating: repeating)
            check(.structure(compiled), payload)
        } catch {
            refused(error)
        }
    }

    /// Mode 1: a template from the header, rendered with what the payload gives.
    static func template(_ header: String, _ payload: [UInt8]) {
        let template: ProfileTemplate
        do throws(ProfileCodecError) {
            template = try ProfileTemplate(header)
        } catch {
            refused(error)
            return
        }
        var reader = Reader(payload)
        var options: [String: String] = [:]
        for name in template.options where reader.byte() & 1 == 1 { options[name] = reader.text() }
        var context = reader.context(options: options)
        for name in template.parameters { context.parameters[name] = reader.json() }
        render(template, context)
    }

    /// Mode 3: a first-byte dispatch from the header's keys.
    static func firstByte(_ header: String, _ payload: [UInt8]) {
        let keys = header.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        do throws(ProfileCodecError) {
            let dispatch = try ProfileFirstByte<String>(keys.map { (key: $0, target: $0) })
            precondition(dispatch.entries.count == keys.count, "\(keys.count) keys gave \(dispatch.entries.count) entries")
            _ = try dispatch.target(for: payload)
        } catch {
            refused(error)
        }
    }

    /// Values read from the payload, in turn; zeros once it ends.
    struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func byte() -> UInt8 {
            guard index < bytes.count else { return 0 }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func integer(_ count: Int) -> UInt64 {
            var value: UInt64 = 0
            for _ in 0..<count { value = value << 8 | UInt64(byte()) }
            return value
        }

        /// A length byte (0-15) and that many bytes as text.
        mutating func text() -> String {
            let count = Int(byte() & 0x0F)
            var text: [UInt8] = []
            for _ in 0..<count { text.append(byte()) }
            return String(decoding: text, as: UTF8.self)
        }

        /// A kind byte and a value: small and huge integers, doubles (any bit pattern), numbers
        /// with halves, text, booleans, null, an array.
        mutating func json() -> JSONValue? {
            switch byte() % 9 {
            case 0: return nil
            case 1: return .integer(Int64(Int8(bitPattern: byte())))
            case 2: return .integer(Int64(bitPattern: integer(8)))
            case 3: return .number(Double(bitPattern: integer(8)))
            case 4: return .number(Double(Int16(bitPattern: UInt16(integer(2)))) / 2)
            case 5: return .string(text())
            case 6: return .bool(byte() & 1 == 1)
            case 7: return .null
            default: return .array([.integer(Int64(byte()))])
            }
        }

        /// A wall time (any Int64, or a recent one) and UTC offset.
        mutating func context(options: [String: String]) -> ProfileTemplate.Context {
            let raw = Int64(bitPattern: integer(8))
            let unixTime = raw & 1 == 0 ? raw : 1_700_000_000 + (raw >> 40)
            let offset = Int32(bitPattern: UInt32(integer(4)))
            return ProfileTemplate.Context(unixTime: unixTime, utcOffset: offset, options: options)
        }
    }
}
