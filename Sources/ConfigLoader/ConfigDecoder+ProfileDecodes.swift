import BridgeCore
import YAMLKit

/// A profile's `decode:`: struct decodes (`{struct, fields}`) and first-byte dispatches to them.
extension ConfigDecoder {
    /// The decodes, by name. The struct decodes are compiled first, so that a `first_byte` may name
    /// any of them, wherever it is in the file.
    func decodeProfileDecodes(_ value: Located, scope: ProfileScope) throws(ConfigError) -> [String: ProfileDecode] {
        var decodes: [String: ProfileDecode] = [:]
        var dispatches: [(name: String, node: Located)] = []
        for entry in try namedEntries(value) {
            let name = try profileName(entry, "decode")
            let fields = try mapping(entry.value, known: ConfigKeys.profileDecode)
            switch (fields("struct"), fields("first_byte")) {
            case (let structNode?, nil):
                decodes[name] = .structure(try decodeProfileStruct(structNode, fields: fields, scope: scope))
            case (nil, let dispatch?):
                if let extra = fields.entries["fields"] {
                    throw error(.invalidValue, "'fields' goes with 'struct', not with 'first_byte'", at: extra.keyMark)
                }
                dispatches.append((name, dispatch))
            case (.some, let dispatch?):
                throw error(.invalidValue, "a decode is a 'struct' or a 'first_byte', not both", at: dispatch.keyMark)
            case (nil, nil):
                throw error(
                    .missingKey, "decode '\(name)' needs 'struct' (with 'fields') or 'first_byte'", at: entry.value.mark)
            }
        }
        let structs = decodes
        for (name, node) in dispatches {
            var entries: [(key: String, target: ProfileStruct)] = []
            for entry in try firstByteEntries(node) {
                let target = try string(entry.value)
                switch structs[target] {
                case .structure(let s)?:
                    entries.append((entry.name, s))
                default:
                    if dispatches.contains(where: { $0.name == target }) {
                        throw error(
                            .invalidValue,
                            "'\(entry.value.path)': '\(target)' is a first_byte decode; a first_byte names struct decodes",
                            at: entry.value.mark)
                    }
                    throw unknownName("decode", target, among: Array(structs.keys), at: entry.value, hint: "; a first_byte names struct decodes")
                }
            }
            do throws(ProfileCodecError) {
                decodes[name] = .firstByte(try ProfileFirstByte(entries))
            } catch {
                throw codecError(error, in: node)
            }
        }
        return decodes
    }

    /// The entries of a `first_byte` mapping, each key checked as one byte in hex (the error inside
    /// the key) and each byte once.
    func firstByteEntries(_ value: Located) throws(ConfigError) -> [NamedEntry] {
        let entries = try namedEntries(value)
        guard !entries.isEmpty else {
            throw error(.invalidValue, "'\(value.path)' has no entries: map at least one byte such as \"01\"", at: value.mark)
        }
        var seen: [UInt8: String] = [:]
        for entry in entries {
            let byte: UInt8
            do throws(ProfileCodecError) {
                byte = try ProfileFirstByte<String>.byte(entry.name)
            } catch {
                throw codecError(error, in: entry.key)
            }
            if let other = seen[byte] {
                throw error(
                    .duplicateKey, "'\(value.path)': keys \"\(other)\" and \"\(entry.name)\" are the same byte",
                    at: entry.key.mark)
            }
            seen[byte] = entry.name
        }
        return entries
    }

    /// `{struct: "<hxIBH6x", fields: {temperature: "/10", ...}}`: the layout, then one field per
    /// value, each a known value name (§7/§13, with a `_N` suffix, or declared in `values:`).
    func decodeProfileStruct(_ structNode: Located, fields: Fields, scope: ProfileScope) throws(ConfigError) -> ProfileStruct {
        let format = try string(structNode)
        let layout: ProfileStructLayout
        do throws(ProfileCodecError) {
            layout = try ProfileStructLayout(format)
        } catch {
            throw codecError(error, in: structNode)
        }
        let entries = try fields("fields").map { node throws(ConfigError) in try namedEntries(node) } ?? []
        var structFields: [ProfileStruct.Field] = []
        for entry in entries {
            try checkValueName(entry, in: fields.qualified("fields"), scope: scope)
            structFields.append(try decodeField(entry.name, entry.value))
        }
        var bits: [ProfileStruct.Bits] = []
        for group in try fields("bits").map({ node throws(ConfigError) in try namedEntries(node) }) ?? [] {
            var derived: [ProfileStruct.Field] = []
            for entry in try namedEntries(group.value) {
                try checkValueName(entry, in: group.value.path, scope: scope)
                derived.append(try decodeField(entry.name, entry.value))
            }
            bits.append(ProfileStruct.Bits(field: group.name, values: derived))
        }
        let repeating = try fields("repeat").map { node throws(ConfigError) in
            ProfileStruct.Repeat(limit: try integer(node, in: 1...ProfileStruct.Repeat.maxLimit))
        }
        do throws(ProfileCodecError) {
            return try ProfileStruct(layout: layout, fields: structFields, bits: bits, repeating: repeating)
        } catch {
            // A field's error at that field; a count mismatch at the struct.
            if error.code != .fieldCount, let field = entries.first(where: { error.message.contains("field '\($0.name)'") }) {
                throw self.error(.invalidValue, "\(field.value.path): \(error.message)", at: field.value.mark)
            }
            throw codecError(error, in: structNode)
        }
    }

    /// A field's value name must be a SPEC §7/§13 name (with a `_N` suffix), one the profile declares
    /// under `values:`, or start with `_` (decoded, not published: an input of `bits:`).
    func checkValueName(_ entry: NamedEntry, in path: String, scope: ProfileScope) throws(ConfigError) {
        guard !entry.name.hasPrefix("_"), !ValueNames.isKnown(entry.name), scope.values[entry.name] == nil else { return }
        let known = Array(ValueNames.all) + scope.values.keys
        var message = "unknown value name '\(entry.name)' in '\(path)'"
        if let suggestion = KeySuggestion.closest(to: entry.name, in: known) {
            message += " (did you mean '\(suggestion)'?"
        } else {
            message += " (use a SPEC §7/§13 name such as temperature, humidity or battery"
        }
        message += "; declare it under 'values:'; or start it with '_' to decode it without publishing it)"
        throw error(.invalidValue, message, at: entry.key.mark)
    }

    /// One field: its transform (``decodeTransform(_:)``), or a mapping with options:
    /// `{scale: "/10", absent_if: [-10]}`, `{map: {0: "off"}, valid: [0, 3]}`.
    func decodeField(_ name: String, _ value: Located) throws(ConfigError) -> ProfileStruct.Field {
        guard case .mapping = value.node, let first = try namedEntries(value).first,
            ConfigKeys.profileField.contains(first.name)
        else {
            return ProfileStruct.Field(name, try decodeTransform(value))
        }
        let options = try mapping(value, known: ConfigKeys.profileField)
        var field = ProfileStruct.Field(name)
        switch (options("scale"), options("map")) {
        case (let scale?, nil): field.transform = try decodeTransform(scale)
        case (nil, let map?): field.transform = try decodeTransform(map)
        case (.some, let map?): throw error(.invalidValue, "a field has a 'scale' or a 'map', not both", at: map.keyMark)
        case (nil, nil): break
        }
        if let node = options("absent_if") {
            let items = try list(node)
            field.absentIf = try items.map { item throws(ConfigError) in
                guard let number = Self.integerKey(try string(item)) else {
                    throw error(.wrongType, "expected an integer (such as -10 or 0xffff) in '\(node.path)'", at: item.mark)
                }
                return number
            }
        }
        if let node = options("valid") {
            let items = try list(node)
            guard items.count == 2 else {
                throw error(.invalidValue, "'\(node.path)' is [min, max], such as [0, 16383]", at: node.mark)
            }
            let low = try number(items[0])
            let high = try number(items[1])
            guard low <= high else {
                throw error(.invalidValue, "'\(node.path)': the minimum \(low) is above the maximum \(high)", at: node.mark)
            }
            field.valid = low...high
        }
        return field
    }

    /// One field's transform: `""` (none), a scale (`"/10"`, `"*0.01"`), `"100-x"`, bits
    /// (`"&0x03"`, `"&0x20?"`), or a map of integers to names (`{0: "off", 1: "on"}`).
    func decodeTransform(_ value: Located) throws(ConfigError) -> ProfileFieldTransform {
        if Self.isNull(value.node) { return .none }
        switch value.node {
        case .scalar:
            let text = try string(value)
            do throws(ProfileCodecError) {
                return try ProfileFieldTransform.parse(text)
            } catch {
                throw codecError(error, in: value)
            }
        case .mapping:
            var map: [Int64: String] = [:]
            for entry in try namedEntries(value) {
                guard let number = Self.integerKey(entry.name) else {
                    throw error(
                        .invalidValue,
                        "'\(value.path)': a map's keys are integers (such as 0: \"off\"), not '\(entry.name)'",
                        at: entry.key.mark)
                }
                guard map[number] == nil else {
                    throw error(.duplicateKey, "'\(value.path)': \(number) is mapped twice", at: entry.key.mark)
                }
                map[number] = try nonEmptyString(entry.value)
            }
            guard !map.isEmpty else {
                throw error(.invalidValue, "'\(value.path)': a map needs at least one entry", at: value.mark)
            }
            return .map(map)
        case .sequence:
            throw error(
                .wrongType,
                "expected a transform (\"\", \"/10\", \"*0.01\") or a map ({0: \"off\"}) for '\(value.path)', found a list",
                at: value.mark)
        }
    }

    /// A decimal integer, or hex with `0x`.
    static func integerKey(_ text: String) -> Int64? {
        if let number = Int64(text) { return number }
        let lower = text.lowercased()
        if lower.hasPrefix("0x") { return Int64(lower.dropFirst(2), radix: 16) }
        if lower.hasPrefix("-0x") { return Int64(lower.dropFirst(3), radix: 16).map { -$0 } }
        return nil
    }
}
