// The shared base types (Bluetooth addresses and UUIDs, hex, backoff, the broker URL) are part
// of BridgeCore's API.
@_exported import BridgeBase
