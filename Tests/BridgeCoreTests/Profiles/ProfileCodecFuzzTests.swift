import Testing

@testable import BridgeCore

/// Random struct formats, payloads and templates built from the characters that matter to their
/// grammars: nothing traps, every compile error points inside its string, every compiled struct
/// decodes each payload at least its size long into one value per field and refuses the shorter
/// ones, and every compiled template renders exactly its size.
@Suite struct ProfileCodecFuzzTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE]

    static let formatAlphabet: [String] = ["<", ">", "!", "=", "@", " ", "x", "b", "B", "h", "H", "i", "I", "l", "L",
                                           "q", "Q", "e", "f", "d", "?", "s", "0", "1", "2", "4", "9", "z", "é", "p"]

    static let templateTokens: [String] = ["0", "a", "F", "57", "01", " ", "{", "}", "|", ".", "unix", "options",
                                           "options.password", "position", "u8", "i16le", "u32be", "crc32be", "9",
                                           "x", "é", "{position|u8}", "{unix}", "{options.pin|u16le}"]

    static func randomString(_ parts: [String], _ random: inout SplitMix64, maxParts: UInt64) -> String {
        var text = ""
        for _ in 0..<Int(random.next() % maxParts) { text += parts[Int(random.next() % UInt64(parts.count))] }
        return text
    }

    @Test(arguments: seeds)
    func structFormats(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var compiled = 0
        for _ in 0..<3000 {
            // Mostly with a byte order first, so that the codes behind it get parsed.
            let prefix = random.next() % 4 == 0 ? "" : "<"
            let format = prefix + Self.randomString(Self.formatAlphabet, &random, maxParts: 12)
            let layout: ProfileStructLayout
            do throws(ProfileCodecError) {
                layout = try ProfileStructLayout(format)
            } catch {
                #expect(error.code == .badFormat)
                #expect(error.column >= 1 && error.column <= format.unicodeScalars.count + 1, "\(format): \(error)")
                continue
            }
            compiled += 1
            #expect(layout.size <= ProfileStructLayout.maxSize)
            for item in layout.items { #expect(item.offset + item.size <= layout.size, "\(format)") }
            let decode = try ProfileStruct(
                layout: layout, fields: layout.items.indices.map { .init("v\($0)", layout.items[$0].isInteger ? .scale(numerator: 1, denominator: 10) : .none) })
            let length = Int(random.next() % UInt64(layout.size + 4))
            let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            do throws(ProfileCodecError) {
                let values = try decode.decode(payload)
                #expect(length >= layout.size)
                #expect(values.count == layout.items.count)
                #expect(!JSONValue.object(values).jsonString.isEmpty)
            } catch {
                #expect(error.code == .tooShort)
                #expect(length < layout.size)
            }
        }
        #expect(compiled > 400)
    }

    @Test(arguments: seeds)
    func templates(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var rendered = 0
        for _ in 0..<3000 {
            let text = Self.randomString(Self.templateTokens, &random, maxParts: 8)
            let template: ProfileTemplate
            do throws(ProfileCodecError) {
                template = try ProfileTemplate(text)
            } catch {
                #expect(error.code == .badTemplate)
                #expect(error.column >= 1 && error.column <= text.unicodeScalars.count + 1, "\(text): \(error)")
                continue
            }
            let value = Int64(bitPattern: random.next()) >> Int64(random.next() % 64)
            let parameters = Dictionary(uniqueKeysWithValues: template.parameters.map { ($0, JSONValue.integer(value)) })
            let options = Dictionary(uniqueKeysWithValues: template.options.map { ($0, String(value)) })
            do throws(ProfileCodecError) {
                let bytes = try template.render(.init(unixTime: 1_764_331_200, options: options, parameters: parameters))
                #expect(bytes.count == template.size)
                rendered += 1
            } catch {
                #expect([.invalidParameter, .invalidOption].contains(error.code), "\(text): \(error)")
            }
        }
        #expect(rendered > 300)
    }
}
