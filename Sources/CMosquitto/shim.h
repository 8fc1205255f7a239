#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <pthread.h>

/* GNU extension (not visible to Swift's Glibc module without _GNU_SOURCE); same prototype as glibc's. */
extern int pthread_setname_np(pthread_t thread, const char *name);

/* Names the calling thread (at most 15 characters), for ps/top/gdb. */
static inline int cmosquitto_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
#endif
