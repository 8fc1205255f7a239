// ble-decode: decodes advertisements given as text, one per line, with BridgeCore's decoders
// (the Swift side of scripts/check-decoders and its family driver; handy for looking at a
// captured frame too).
//
//   input, one frame a line, either
//           ADDRESS UUID PAYLOAD [BINDKEY]      e.g.  A4:C1:38:8D:18:B2 fcd2 4002c409
//           (UUID: the service data UUID, e.g. fcd2 or 181a; PAYLOAD and BINDKEY in hex, "-" for
//           an empty payload)
//   or a JSON object (a line starting with "{"), the frame shape of scripts/decoders/*.py:
//           {"address":"A4:C1:38:00:00:01","name":"LYWSD03MMC","service_data":{"fe95":"30585b05..."},
//            "manufacturer_data":{"0x0969":"..."},"service_uuids":["fee5"],"key":"hex"}
//           (every member but "address" optional, null allowed; manufacturer_data keys are the
//           company id in hex ("0x0969") or decimal, values the bytes AFTER the company id;
//           other members, e.g. "source", are ignored)
//   lines starting with # and empty lines are skipped.
//   output: one JSON object per input line, in order:
//           {"decoder":"bthome_v2","manufacturer":null,"model":null,"packet_id":17,"values":{...},
//            "encrypted":false,"counter":null,"trigger_based":false}
//           {"decoder":null} when no decoder applies, {"error":"bad_mic","message":"..."} when
//           the decoder fails, {"error":"bad_input","message":"..."} for a line it cannot read.
import BridgeCore

func failure(_ code: String, _ message: String) -> JSONValue {
    ["error": .string(code), "message": .string(message)]
}

func hexBytes(_ text: String) -> [UInt8]? {
    if text.isEmpty || text == "-" { return [] }
    return try? Hex.decode(text)
}

/// A text line: ADDRESS UUID PAYLOAD [BINDKEY].
func parseTextLine(_ line: Substring) -> Result<(AdvertisementFrame, [UInt8]?), InputError> {
    let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard fields.count == 3 || fields.count == 4 else {
        return .failure(InputError("expected ADDRESS UUID PAYLOAD [BINDKEY], got \(fields.count) fields"))
    }
    guard let address = BluetoothAddress(fields[0]) else { return .failure(InputError("invalid address '\(fields[0])'")) }
    guard let uuid = BluetoothUUID(fields[1]) else { return .failure(InputError("invalid UUID '\(fields[1])'")) }
    guard let payload = hexBytes(String(fields[2])) else { return .failure(InputError("invalid payload hex")) }
    var bindkey: [UInt8]? = nil
    if fields.count == 4 {
        guard let key = hexBytes(String(fields[3])) else { return .failure(InputError("invalid bindkey hex")) }
        bindkey = key
    }
    return .success((AdvertisementFrame(address: address, serviceData: [uuid: payload], manufacturerData: [:]), bindkey))
}

/// A JSON line in the frame shape of scripts/decoders/*.py.
func parseJSONLine(_ line: Substring) -> Result<(AdvertisementFrame, [UInt8]?), InputError> {
    let value: JSONValue
    do {
        value = try JSONParser.parse(String(line))
    } catch {
        return .failure(InputError("\(error)"))
    }
    guard case .object = value else { return .failure(InputError("a JSON line must be an object")) }
    guard let addressText = value["address"]?.stringValue, let address = BluetoothAddress(addressText) else {
        return .failure(InputError("missing or invalid \"address\""))
    }
    var frame = AdvertisementFrame(address: address)
    switch value["name"] {
    case nil, .null?: break
    case .string(let name)?: frame.name = name
    default: return .failure(InputError("\"name\" must be a string or null"))
    }
    if let member = value["service_data"], !member.isNull {
        guard let object = member.objectValue else { return .failure(InputError("\"service_data\" must be an object")) }
        for entry in object {
            guard let uuid = BluetoothUUID(entry.key) else { return .failure(InputError("invalid service UUID '\(entry.key)'")) }
            guard let text = entry.value.stringValue, let bytes = hexBytes(text) else {
                return .failure(InputError("invalid hex for service data \(entry.key)"))
            }
            frame.serviceData[uuid] = bytes
        }
    }
    if let member = value["manufacturer_data"], !member.isNull {
        guard let object = member.objectValue else { return .failure(InputError("\"manufacturer_data\" must be an object")) }
        for entry in object {
            let key = entry.key.lowercased()
            let id = key.hasPrefix("0x") ? UInt16(key.dropFirst(2), radix: 16) : UInt16(key)
            guard let id else { return .failure(InputError("invalid company id '\(entry.key)'")) }
            guard let text = entry.value.stringValue, let bytes = hexBytes(text) else {
                return .failure(InputError("invalid hex for manufacturer data \(entry.key)"))
            }
            frame.manufacturerData[id] = bytes
        }
    }
    if let member = value["service_uuids"], !member.isNull {
        guard let array = member.arrayValue else { return .failure(InputError("\"service_uuids\" must be an array")) }
        for element in array {
            guard let text = element.stringValue, let uuid = BluetoothUUID(text) else {
                return .failure(InputError("invalid UUID in \"service_uuids\""))
            }
            frame.serviceUUIDs.append(uuid)
        }
    }
    var key: [UInt8]? = nil
    if let member = value["key"], !member.isNull {
        guard let text = member.stringValue, let bytes = hexBytes(text) else { return .failure(InputError("invalid \"key\" hex")) }
        key = bytes
    }
    return .success((frame, key))
}

struct InputError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

func decodeLine(_ line: Substring) -> JSONValue {
    let parsed = line.hasPrefix("{") ? parseJSONLine(line) : parseTextLine(line)
    let frame: AdvertisementFrame
    let bindkey: [UInt8]?
    switch parsed {
    case .failure(let error): return failure("bad_input", error.message)
    case .success(let input): (frame, bindkey) = input
    }
    switch AdvertisementDecoder.decode(frame, bindkey: bindkey) {
    case nil:
        return ["decoder": nil]
    case .failure(let error)?:
        return failure(error.code, error.description)
    case .success(let decoded)?:
        return [
            "decoder": .string(decoded.decoder),
            "manufacturer": decoded.manufacturer.map { .string($0) } ?? nil,
            "model": decoded.model.map { .string($0) } ?? nil,
            "packet_id": decoded.packetID.map { .integer(Int64($0)) } ?? nil,
            "values": .object(decoded.values),
            "encrypted": .bool(decoded.encrypted),
            "counter": decoded.counter.map { .integer(Int64($0)) } ?? nil,
            "trigger_based": .bool(decoded.triggerBased),
        ]
    }
}

while let line = readLine(strippingNewline: true) {
    let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
    if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
    print(decodeLine(trimmed).jsonString)
}
