/*
 * The subset of zitilib (OpenZiti C SDK 1.x line, handle API from 1.8) that monky-deployd uses,
 * for a prebuilt 1.x libziti shipped without headers. With headers (include/ziti/zitilib.h) the
 * SDK's own header is used instead; see wrapper_sdk.h.
 */
#ifndef MONKY_ZITILIB_1X_H
#define MONKY_ZITILIB_1X_H
#include <stdint.h>

typedef uint32_t ziti_handle_t;

typedef struct ziti_version_s {
    const char *version;
    const char *revision;
    const char *build_date;
} ziti_version;

const ziti_version *ziti_get_version(void);
const char *ziti_errorstr(int err);

void Ziti_lib_init(void);
int Ziti_last_error(void);
int Ziti_enroll_identity(const char *jwt, const char *key, const char *cert,
                         char **id_json, unsigned long *id_json_len);
int Ziti_load_context(ziti_handle_t *h, const char *identity);
#ifdef MONKY_ZITI_HAS_LOAD_TIMEOUT
int Ziti_load_context_with_timeout(ziti_handle_t *h, const char *identity, int timeout_ms);
#endif
int Ziti_socket(int type);
int Ziti_close(int socket);
int Ziti_connect(int socket, ziti_handle_t ztx, const char *service, const char *terminator);
void Ziti_lib_shutdown(void);

#endif
