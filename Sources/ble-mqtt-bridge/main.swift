print("ble-mqtt-bridge")
