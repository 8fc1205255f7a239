import BlueZ
import BridgeCore
import RuntimeCore
import MQTT

extension Supervisor {
    /// `{base}/bridge/request/{command}`: the core decides what is done and answered; the
    /// answer goes to `bridge/response/{command}` and the message's v5 Response Topic.
    func handleRequest(_ command: String, _ message: MQTTMessage, _ group: inout DiscardingTaskGroup) {
        let actions = core.handle(.request(command: command, payload: message.payload), now: now, tree: readTree(.noDevices),
            unixTime: ctx.clock.unixTime)
        for action in actions {
            if case .respond(let response) = action { respond(response, to: message) } else { perform(action, &group) }
        }
    }

    /// Publishes the core's answer, with the figures it names (health, the device list).
    func respond(_ response: SupervisorCore.Response, to message: MQTTMessage?) {
        var data = JSONObject()
        var health: JSONObject?
        switch response.body {
        case .empty:
            break
        case .health(let bluez, let adapter):
            // SPEC §9: the health object's fields, at the top of the answer; `data` keeps the summary.
            health = healthObject()
            let entries = ctx.registry.all
            data.append("healthy", .bool(bluez && adapter))
            data.append("bluez", .bool(bluez))
            data.append("adapter", .bool(adapter))
            data.append("devices", .integer(Int64(entries.count)))
            data.append("connected", .integer(Int64(entries.filter(\.record.available).count)))
            data.append("published", .integer(Int64(clamping: ctx.router.published)))
        case .devices(let list):
            data.append("devices", .array(list))
        case .device(let name, let address):
            data.append("device", .string(name))
            if let address { data.append("address", .string(address)) }
        }
        var object = JSONObject()
        object.append("status", .string(response.error == nil ? "ok" : "error"))
        for member in health?.members ?? [] { object.append(member.key, member.value) }
        object.append("data", .object(data))
        if let error = response.error { object.append("error", .string(error)) }
        if let transaction = response.transaction { object.append("transaction", transaction) }
        let payload = JSONValue.object(object).jsonBytes
        ctx.broker.publish(topic: ctx.topics.bridgeResponse(response.command), payload: payload, qos: 1, retain: false)
        if let message { ctx.responder.reply(to: message, payload) }
    }
}
