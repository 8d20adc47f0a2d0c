/* bindgen entry point when the SDK ships its own headers (vendored source tree or a prebuilt
 * SDK with include/). ziti_get_version lives in ziti/ziti.h, which drags in libuv and tlsuv
 * headers; declare just it here instead. */
#include <ziti/zitilib.h>

#ifndef ZITI_SDK_ZITI_H
typedef struct monky_ziti_version_s {
    const char *version;
    const char *revision;
    const char *build_date;
} monky_ziti_version;
const monky_ziti_version *ziti_get_version(void);
#endif
