import Testing
import WebUI

@Suite struct MessageStoreTests {
    @Test func keepsTheLastMessageOfEachTopic() {
        let store = MessageStore(baseTopic: "ble")
        store.apply(topic: "ble/kitchen/battery/level", payload: #"{"value":90}"#)
        store.apply(topic: "ble/kitchen/battery/level", payload: #"{"value":91}"#)
        store.apply(topic: "ble/bridge/state", payload: "online")
        #expect(store.payload(of: "ble/kitchen/battery/level") == #"{"value":91}"#)
        #expect(store.snapshot().map(\.topic) == ["ble/bridge/state", "ble/kitchen/battery/level"])
    }

    @Test func anEmptyPayloadClearsTheTopic() {
        let store = MessageStore(baseTopic: "ble")
        store.apply(topic: "ble/config/devices/pantry", payload: "{}")
        #expect(store.count == 1)
        #expect(store.apply(topic: "ble/config/devices/pantry", payload: ""))
        #expect(store.count == 0)
        #expect(store.payload(of: "ble/config/devices/pantry") == nil)
    }

    @Test func commandsRequestsAndOtherBasesAreNotKept() {
        let store = MessageStore(baseTopic: "ble")
        #expect(!store.apply(topic: "ble/kitchen/battery/level/set", payload: "01"))
        #expect(!store.apply(topic: "ble/kitchen/battery/level/get", payload: "{}"))
        #expect(!store.apply(topic: "ble/bridge/request/scan", payload: "{}"))
        #expect(!store.apply(topic: "ble/bridges/kitchen/request/device/add", payload: "{}"))
        #expect(!store.apply(topic: "blexyz/kitchen/x/y", payload: "1"))
        #expect(!store.apply(topic: "homeassistant/sensor/x/config", payload: "1"))
        #expect(store.apply(topic: "ble/bridge/response/scan", payload: "{}"))
        #expect(store.apply(topic: "ble/kitchen/battery/level/result", payload: "{}"))
        #expect(store.count == 2)
    }

    @Test func newTopicsBeyondTheCapacityAreDroppedAndCounted() {
        let store = MessageStore(baseTopic: "ble", capacity: 3)
        for index in 0..<5 { store.apply(topic: "ble/d\(index)/s/c", payload: "\(index)") }
        #expect(store.count == 3)
        #expect(store.droppedTopics == 2)
        store.apply(topic: "ble/d0/s/c", payload: "new")
        #expect(store.payload(of: "ble/d0/s/c") == "new")
        store.apply(topic: "ble/d1/s/c", payload: "")
        store.apply(topic: "ble/d4/s/c", payload: "4")
        #expect(store.payload(of: "ble/d4/s/c") == "4")
    }

    @Test func bridgesComeFromTheirStateTopics() {
        let store = MessageStore(baseTopic: "ble")
        store.apply(topic: "ble/bridges/kitchen/state", payload: "online")
        store.apply(topic: "ble/bridges/attic/state", payload: "offline")
        store.apply(topic: "ble/bridges/cellar/state", payload: "online")
        store.apply(topic: "ble/bridges/cellar/devices", payload: "[]")
        #expect(store.bridges == ["attic", "cellar", "kitchen"])
        #expect(store.onlineBridges == ["cellar", "kitchen"])
        store.apply(topic: "ble/bridges/cellar/state", payload: "")
        #expect(store.bridges == ["attic", "kitchen"])
    }
}
