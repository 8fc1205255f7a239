// libcrypto's EVP interface for bluez-sim's own AES (SimAES: BTHome v2 encryption, resolvable private addresses).
// The bridge does not use it: BridgeCore's AES is Swift (AES128).
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <openssl/evp.h>

#endif
