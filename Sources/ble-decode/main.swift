// ble-decode: decodes advertisements given as text, one per line, with BridgeCore's decoders
// (the Swift side of scripts/check-decoders; handy for looking at a captured frame too).
//
//   input:  ADDRESS UUID PAYLOAD [BINDKEY]      e.g.  A4:C1:38:8D:18:B2 fcd2 4002c409 
//           (UUID: the service data UUID, e.g. fcd2 or 181a; PAYLOAD and BINDKEY in hex, "-" for
//           an empty payload; lines starting with # and empty lines are skipped)
//   output: one JSON object per input line, in order:
//           {"decoder":"bthome_v2","packet_id":17,"values":{...},"encrypted":false,"counter":null,"trigger_based":false}
//           {"decoder":null} when no decoder applies, {"error":"bad_mic","message":"..."} when
//           the decoder fails, {"error":"bad_input","message":"..."} for a line it cannot read.
import BridgeCore

func failure(_ code: String, _ message: String) -> JSONValue {
    ["error": .string(code), "message": .string(message)]
}

func decodeLine(_ line: Substring) -> JSONValue {
    let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard fields.count == 3 || fields.count == 4 else {
        return failure("bad_input", "expected ADDRESS UUID PAYLOAD [BINDKEY], got \(fields.count) fields")
    }
    guard let address = BluetoothAddress(fields[0]) else { return failure("bad_input", "invalid address '\(fields[0])'") }
    guard let uuid = BluetoothUUID(fields[1]) else { return failure("bad_input", "invalid UUID '\(fields[1])'") }
    let payload: [UInt8]
    if fields[2] == "-" {
        payload = []
    } else {
        guard let bytes = try? Hex.decode(String(fields[2])) else { return failure("bad_input", "invalid payload hex") }
        payload = bytes
    }
    var bindkey: [UInt8]? = nil
    if fields.count == 4 {
        guard let key = try? Hex.decode(String(fields[3])) else { return failure("bad_input", "invalid bindkey hex") }
        bindkey = key
    }
    let frame = AdvertisementFrame(address: address, serviceData: [uuid: payload], manufacturerData: [:])
    switch AdvertisementDecoder.decode(frame, bindkey: bindkey) {
    case nil:
        return ["decoder": nil]
    case .failure(let error)?:
        return failure(error.code, error.description)
    case .success(let decoded)?:
        return [
            "decoder": .string(decoded.decoder),
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
