/*
 * The subset of zitilib (OpenZiti C SDK 0.29 line, e.g. 0.29.3 from PyPI openziti==0.6.0) that
 * monky-deployd uses, declared by hand because that prebuilt library ships without headers.
 * Signatures checked against the 0.29.3 symbols and the openziti 0.6.0 Python bindings (ctypes).
 * Context: opaque pointer (NULL on failure). No Ziti_close (added in 0.30.7).
 */
#ifndef MONKY_ZITILIB_0_29_H
#define MONKY_ZITILIB_0_29_H

typedef struct ziti_ctx *ziti_context;

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
ziti_context Ziti_load_context(const char *identity);
int Ziti_socket(int type);
int Ziti_connect(int socket, ziti_context ztx, const char *service, const char *terminator);
void Ziti_lib_shutdown(void);

#endif
