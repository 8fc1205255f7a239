import CMosquitto

/// The handle's options and callbacks, set once before the session is on a loop.
extension MosquittoSession {
    func configureHandle() {
        // Threaded mode only makes `packet__queue` queue instead of writing each packet at once
        // (see the type's documentation); no libmosquitto thread is started.
        _ = mosquitto_threaded_set(handle, true)
        let version = isV5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(version))
        _ = mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)

        mosquitto_connect_v5_callback_set(handle) { _, object, rc, _, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleConnect(rc: rc)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, object, rc, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleDisconnect(rc: rc)
        }
        mosquitto_publish_v5_callback_set(handle) { _, object, mid, _, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handlePublished(mid: mid)
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { _, object, mid, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleUnsubscribed(mid: mid)
        }
        mosquitto_message_v5_callback_set(handle) { _, object, message, properties in
            guard let object, let message else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue()
                .handleMessage(message, properties: properties)
        }
        setLogCallback(enabled: true)

        if let username = configuration.username {
            let rc = mosquitto_username_pw_set(handle, username, configuration.password)
            if rc != Mosquitto.success {
                logger.error("MQTT: cannot set the user name: \(Mosquitto.describe(rc))")
            }
        }

        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, will.topic, Int32(clamping: bytes.count), bytes.baseAddress, Int32(clamping: will.qos),
                    will.retain)
            }
            if rc != Mosquitto.success {
                logger.error("MQTT: cannot set the last will on '\(will.topic)': \(Mosquitto.describe(rc))")
            }
        }

        if let tls = configuration.tls {
            if tls.caFile == nil {
                _ = mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            }
            if tls.caFile != nil || tls.certFile != nil {
                let rc = mosquitto_tls_set(handle, tls.caFile, nil, tls.certFile, tls.keyFile, nil)
                if rc != Mosquitto.success {
                    logger.error(
                        "MQTT: invalid TLS settings (ca_file, cert_file, key_file): \(Mosquitto.describe(rc))")
                }
            }
        }
    }

    /// libmosquitto's log is only read for OpenSSL's reason of a failed attempt. While a
    /// callback is set, `log__printf` formats every line into a fresh 500-byte buffer, one per
    /// publish ("Client … sending PUBLISH"): the callback is set while connecting only.
    func setLogCallback(enabled: Bool) {
        if enabled {
            mosquitto_log_callback_set(handle) { _, object, _, text in
                guard let object, let text else { return }
                Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleLog(text)
            }
        } else {
            mosquitto_log_callback_set(handle, nil)
        }
    }
}
