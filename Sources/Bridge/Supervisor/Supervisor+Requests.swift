import BlueZ
import BridgeCore
import MQTT

extension Supervisor {
    /// `{base}/bridge/devices`: one object per managed device (SPEC §4, §6).
    func devicesPayload() -> [UInt8] {
        var list: [JSONValue] = []
        for e in ctx.registry.all {
            let snapshot = central.withTree { $0.device(e.path) }
            // BlueZ 5.66 does not always signal Connected=true after Connect (seen on the real
            // stack): the session knows from the Connect reply.
            let connected = e.connected || (snapshot?.connected ?? false)
            var services: [JSONValue] = []
            if connected && !e.services.isEmpty {
                services = e.services.map { .string($0) }
            } else {
                let config = config.device(address: e.address, name: snapshot?.name ?? snapshot?.alias)
                for u in snapshot?.uuids ?? [] {
                    guard GattMapping.listsService(u, device: config) else { continue }
                    services.append(.string(ctx.topics.serviceSegment(u, config: config)))
                }
            }
            var obj = JSONObject()
            obj.append("name", .string(e.segment))
            obj.append("address", .string(e.address.description))
            obj.append("address_type", .string(e.addressType))
            obj.append("connected", .bool(connected))
            // BlueZ reports 127 for "no valid RSSI" on some controllers.
            if let rssi = snapshot?.rssi, rssi != 127 { obj.append("rssi", .integer(Int64(rssi))) } else { obj.append("rssi", .null) }
            obj.append("services", .array(services))
            obj.append("connection", .string(e.policy.name))
            obj.append("available", .bool(e.available))
            obj.append("adapter", .string(e.adapter))
            list.append(.object(obj))
        }
        return JSONValue.array(list).jsonBytes
    }

    func publishDevices(force: Bool = false) {
        let payload = devicesPayload()
        guard force || payload != lastDevicesPayload else { return }
        lastDevicesPayload = payload
        ctx.broker.publish(topic: ctx.topics.bridgeDevices, payload: payload, qos: 1, retain: true)
    }

    /// `{base}/bridge/request/{command}`: answered on `bridge/response/{command}` (and a v5
    /// Response Topic).
    func handleRequest(_ command: String, _ message: MQTTMessage, _ group: inout DiscardingTaskGroup) {
        let request = (try? JSONParser.parse(message.payload)) ?? .null
        var data = JSONObject()
        var health: JSONObject?
        var error: String?
        switch command {
        case "health_check":
            // SPEC §9: the health object's fields, at the top of the answer; `data` keeps the summary.
            health = healthObject()
            let entries = ctx.registry.all
            data.append("healthy", .bool(central.isAvailable && core.adapterReady))
            data.append("bluez", .bool(central.isAvailable))
            data.append("adapter", .bool(core.adapterReady))
            data.append("devices", .integer(Int64(entries.count)))
            data.append("connected", .integer(Int64(entries.filter(\.available).count)))
            data.append("published", .integer(Int64(clamping: ctx.router.published)))
        case "devices":
            data.append("devices", (try? JSONParser.parse(devicesPayload())) ?? .array([]))
        case "forget", "reconnect":
            guard let target = request["device"]?.stringValue ?? request.stringValue else {
                error = "expected {\"device\": \"<name or address>\"}"
                break
            }
            guard let record = core.find(target) else {
                if command == "forget", let a = BluetoothAddress(target), core.isStored(a.description) {
                    feed(.forgetStored(address: a.description), .none, &group)
                    data.append("device", .string(target))
                    break
                }
                error = "no device '\(target)' is known to the bridge"
                break
            }
            data.append("device", .string(record.segment))
            data.append("address", .string(record.address.description))
            feed(command == "forget" ? .forget(path: record.path) : .reconnect(path: record.path), .none, &group)
        default:
            error = "unknown request '\(command)' (known: health_check, devices, forget, reconnect)"
        }
        var response = JSONObject()
        response.append("status", .string(error == nil ? "ok" : "error"))
        for member in health?.members ?? [] { response.append(member.key, member.value) }
        response.append("data", .object(data))
        if let error { response.append("error", .string(error)) }
        if let transaction = request["transaction"] { response.append("transaction", transaction) }
        let payload = JSONValue.object(response).jsonBytes
        ctx.broker.publish(topic: ctx.topics.bridgeResponse(command), payload: payload, qos: 1, retain: false)
        ctx.responder.reply(to: message, payload)
    }
}
