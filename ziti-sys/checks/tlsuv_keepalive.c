// Checks vendor patch tlsuv-0001 with the vendored tlsuv's own HTTP client, kept alive as the
// ziti controller client is after ziti-sdk-c-0002: requests to one server share a connection,
// setting the same URL again keeps it, and a URL naming another server sends the next request
// there (before the patch it went down the kept connection to the first one).
// Built and run by scripts/check-tlsuv-keepalive.sh against two local HTTP/1.1 servers that
// answer "<name> conn=<connection number>".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <tlsuv/http.h>

#define STEPS 4
static const char *urls[STEPS];
static char got[STEPS][128];
static int step;
static tlsuv_http_t clt;

static void next(void);

static void body_cb(tlsuv_http_req_t *req, char *body, ssize_t len) {
    (void) req;
    if (len > 0) {
        strncat(got[step], body, (size_t) len < sizeof(got[step]) - strlen(got[step]) - 1
                                     ? (size_t) len : sizeof(got[step]) - strlen(got[step]) - 1);
    } else if (len == UV_EOF) {
        step++;
        next();
    } else if (len < 0) {
        fprintf(stderr, "step %d: body error %zd (%s)\n", step, len, uv_strerror((int) len));
        exit(2);
    }
}

static void resp_cb(tlsuv_http_resp_t *resp, void *ctx) {
    (void) ctx;
    if (resp->code != 200) {
        fprintf(stderr, "step %d: response %d\n", step, resp->code);
        exit(2);
    }
    resp->body_cb = body_cb;
}

static void closed(tlsuv_http_t *c) { (void) c; }

static void next(void) {
    if (step == STEPS) {
        tlsuv_http_close(&clt, closed);
        return;
    }
    if (step > 0) {
        tlsuv_http_set_url(&clt, urls[step]);
    }
    tlsuv_http_req(&clt, "GET", "/", resp_cb, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s URL_A URL_B\n", argv[0]);
        return 2;
    }
    // A, A again (same URL set again), B (another server), A (back)
    urls[0] = argv[1]; urls[1] = argv[1]; urls[2] = argv[2]; urls[3] = argv[1];
    uv_loop_t *loop = uv_default_loop();
    tlsuv_http_init(loop, &clt, urls[0]);
    tlsuv_http_idle_keepalive(&clt, 3000);
    next();
    uv_run(loop, UV_RUN_DEFAULT);
    for (int i = 0; i < STEPS; i++) {
        printf("%s\n", got[i]);
    }
    return step == STEPS ? 0 : 1;
}
