print("bluez-sim")
