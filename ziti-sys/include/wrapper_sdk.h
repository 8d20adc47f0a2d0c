/* bindgen entry point: the SDK's own zitilib.h. ziti_get_version lives in ziti/ziti.h, which
 * drags in libuv and tlsuv headers; declare just it here, with the prefix of ziti_version
 * that is stable across 1.x (the model's first three strings). */
#include <ziti/zitilib.h>

typedef struct monky_ziti_version_s {
    const char *version;
    const char *revision;
    const char *build_date;
} monky_ziti_version;
const monky_ziti_version *ziti_get_version(void);
