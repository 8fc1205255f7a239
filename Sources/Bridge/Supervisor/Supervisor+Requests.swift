import BlueZ
import BridgeCore
import RuntimeCore
import MQTT

extension Supervisor {
    /// `{base}/bridge/request/{command}`: the core decides what is done and answered; the
    /// answer goes to `bridge/response/{command}` and the message's v5 Response Topic.
    func handleRequest(_ command: String, _ message: MQTTMessage, _ group: inout DiscardingTaskGroup) {
        // A run-time device may be one BlueZ knows already: its session starts at once (SPEC §14).
        let scope: DeviceScope = SupervisorCore.deviceRequests.contains(command) ? .adapters : .noDevices
        let event = SupervisorCore.Event.request(
            command: command, payload: message.payload, replyTo: CommandResponder.replyAddress(of: message))
        for action in core.handle(event, now: now, tree: readTree(scope), unixTime: ctx.clock.unixTime) {
            perform(action, &group)
        }
    }

    /// Publishes the core's answer, with the figures it names (health, the device list), also to the request's v5
    /// Response Topic.
    func respond(_ response: SupervisorCore.Response) {
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
        case .scan(let devices):
            data.append("devices", .array(devices))
        }
        var object = JSONObject()
        object.append("status", .string(response.error == nil ? "ok" : "error"))
        for member in health?.members ?? [] { object.append(member.key, member.value) }
        object.append("data", .object(data))
        if let error = response.error {
            if let code = response.errorCode {
                object.append("error", ["code": .string(code.rawValue), "message": .string(error)])
            } else {
                object.append("error", .string(error))
            }
        }
        if let transaction = response.transaction { object.append("transaction", transaction) }
        let payload = JSONValue.object(object).jsonBytes
        ctx.broker.publish(topic: ctx.topics.bridgeResponse(response.command), payload: payload, qos: 1, retain: false)
        if let address = response.replyTo { ctx.responder.reply(to: address, payload) }
    }
}
