// Copyright (c) 2022-2026.  NetFoundry Inc
//
// SPDX-License-Identifier: Apache-2.0
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// https://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

#include <stdbool.h>
#include <stdlib.h>
#include <uv.h>



#include <ziti/zitilib.h>
#include <ziti/ziti.h>
#include <ziti/ziti_log.h>
#include <assert.h>
#include "connect.h"
#include "zt_internal.h"
#include "util/future.h"
#include "zl.h"

static const char *configs[] = {
        ZITI_INTERCEPT_CFG_V1,
        ZITI_CLIENT_CFG_V1,
        NULL,
};

static void do_timeout_cleanup(void *args, future_t *f, uv_loop_t *l);

// monky-deployd patch: the service refresh period of contexts loaded from now on (was a literal
// 60). Written by the caller before Ziti_load_context*(), read on the loop thread after the
// load request crossed the loop's queue, so the queue orders the two.
static _Atomic long zl_refresh_interval = 60;

void Ziti_set_refresh_interval(long seconds) {
    if (seconds > 0) {
        zl_refresh_interval = seconds;
    }
}

#if _WIN32

// define sockaddr_un if missing under MINGW
#ifndef UNIX_PATH_MAX
#define UNIX_PATH_MAX 108
struct sockaddr_un {
     ADDRESS_FAMILY sun_family;
     char sun_path[UNIX_PATH_MAX];
};
#endif
#endif

model_map ziti_contexts;

model_map ziti_sockets;

static void free_wrap(ztx_wrap_t *w) {
    if (w == NULL) return;

    for (int i = 0; w->signers && w->signers[i]; i++) {
        free((void*)w->signers[i]);
    }
    free(w->signers);
    FREE(w);
}

ztx_wrap_t *zl_find_wrap(ziti_handle_t handle) {
    if (handle == ZITI_INVALID_HANDLE) return NULL;

    ztx_wrap_t *w;
    const char *id;
    MODEL_MAP_FOREACH(id, w, &ziti_contexts) {
        if (w->ztx->id == handle) {
            return w;
        }
    }
    return NULL;
}

static void process_service_event(ztx_wrap_t *wrap, const struct ziti_service_event *ev) {
    for (int i = 0; ev->removed && ev->removed[i] != NULL; i++) {
        ziti_intercept_cfg_v1 *intercept = model_map_remove(&wrap->intercepts, ev->removed[i]->name);
        free_ziti_intercept_cfg_v1(intercept);
        FREE(intercept);
    }

    ziti_service_array srv_arrays[] = {
        ev->changed,
        ev->added,
    };

    for (size_t ai = 0; ai < sizeof(srv_arrays)/sizeof(srv_arrays[0]); ai++) {
        ziti_service_array arr = srv_arrays[ai];
        for (int i = 0; arr && arr[i] != NULL; i++) {
            ziti_service *s = arr[i];
            ziti_intercept_cfg_v1 *intercept = alloc_ziti_intercept_cfg_v1();
            ziti_client_cfg_v1 clt_cfg = {0};

            if (ziti_service_get_config(s, ZITI_INTERCEPT_CFG_V1, intercept, (parse_service_cfg_f)parse_ziti_intercept_cfg_v1) == ZITI_OK) {
                intercept = model_map_set(&wrap->intercepts, s->name, intercept);
            } else if (ziti_service_get_config(s, ZITI_CLIENT_CFG_V1, &clt_cfg, (parse_service_cfg_f)parse_ziti_client_cfg_v1) == ZITI_OK) {
                ziti_intercept_from_client_cfg(intercept, &clt_cfg);
                intercept = model_map_set(&wrap->intercepts, s->name, intercept);
                free_ziti_client_cfg_v1(&clt_cfg);
            } else {
                // use empty intercept to indicate service has no config
                intercept = model_map_set(&wrap->intercepts, s->name, intercept);
            }

            free_ziti_intercept_cfg_v1(intercept);
            FREE(intercept);
        }
    }

    complete_future(wrap->services_loaded_f, NULL, 0);
}

static void process_auth_event(ztx_wrap_t *wrap, const struct ziti_auth_event *ev) {
    if (wrap->auth_future == NULL) {
        return;
    }
    future_t *f = wrap->auth_future;
    wrap->auth_future = NULL;
    switch (ev->action) {
    case ziti_auth_success:
        wrap->auth_future = f; // wait for services to load
        break;
    case ziti_auth_cannot_continue:
        fail_future(f, ZITI_AUTHENTICATION_FAILED);
        break;
    case ziti_auth_prompt_totp:
    case ziti_auth_prompt_pin:
        complete_future(f, (void *) (uintptr_t)wrap->ztx->id, ZITI_PARTIALLY_AUTHENTICATED);
        break;
    case ziti_auth_select_external:
    case ziti_auth_login_external:
        complete_future(f, (void *) (uintptr_t)wrap->ztx->id, ZITI_EXTERNAL_LOGIN_REQUIRED);
        break;
    case ziti_auth_enroll_totp:
        complete_future(f, (void *) (uintptr_t)wrap->ztx->id, ZITI_MFA_NOT_ENROLLED);
        break;
    }
}

static void on_ctx_event(ziti_context ztx, const ziti_event_t *ev) {
    ztx_wrap_t *wrap = ziti_app_ctx(ztx);
    if (wrap == NULL) {
        return;
    }

    assert(wrap->ztx == ztx);

    if (ev->type == ZitiContextEvent) {
        int err = ev->ctx.ctrl_status;
        if (err == ZITI_OK) {
            // defer completing auth until services load, since some apps wait for that before proceeding
            if (wrap->services_loaded) {
                complete_future(wrap->auth_future, (void *)(uintptr_t)ztx->id, ZITI_OK);
                wrap->auth_future = NULL;
            }

            if (!wrap->services_loaded_f) {
                wrap->services_loaded_f = new_future();
            }
        } else if (err == ZITI_PARTIALLY_AUTHENTICATED) {
            complete_future(wrap->auth_future, (void *) (uintptr_t) ztx->id, ZITI_PARTIALLY_AUTHENTICATED);
            wrap->auth_future = NULL;
            return;
        } else if (err == ZITI_DISABLED) {
            wrap->services_loaded = false;
            destroy_future(wrap->services_loaded_f);
            wrap->services_loaded_f = NULL;
            ziti_set_app_ctx(ztx, NULL);
            free_wrap(wrap);
        }
    } else if (ev->type == ZitiAuthEvent && wrap->enroll_future) {
        // enrollment-specific auth event handling
        if (ev->auth.action == ziti_auth_select_external) {
            // check controller version for cert/token enrollment
            if (wrap->enroll_mode == ziti_enroll_cert || wrap->enroll_mode == ziti_enroll_token) {
                const char *ctrl_ver = ztx_get_controller(ztx)->version.version;
                if (!ctrl_version_supports_enroll_to(ctrl_ver)) {
                    ZITI_LOG(ERROR, "controller %s does not support enrollToCert/enrollToToken (requires v2.0+)", ctrl_ver);
                    fail_future(wrap->enroll_future, ZITI_INVALID_STATE);
                    wrap->enroll_future = NULL;
                    ziti_shutdown(ztx);
                    return;
                }
            }

            for (int i = 0; ev->auth.providers && ev->auth.providers[i]; i++) {
                // if signer_name specified, skip non-matching signers
                if (wrap->signer_name &&
                    strcmp(ev->auth.providers[i]->name, wrap->signer_name) != 0) {
                    continue;
                }
                bool match = false;
                switch (wrap->enroll_mode) {
                case ziti_enroll_cert:  match = ev->auth.providers[i]->can_cert_enroll; break;
                case ziti_enroll_token: match = ev->auth.providers[i]->can_token_enroll; break;
                case ziti_enroll_none:  match = true; break;
                default: break;
                }
                if (match) {
                    ZITI_LOG(INFO, "enrollment: using signer[%s] mode=%d",
                             ev->auth.providers[i]->name, wrap->enroll_mode);
                    ziti_use_ext_jwt_signer(ztx, ev->auth.providers[i]->name);
                    ziti_ext_auth(ztx, NULL, NULL);
                    return;
                }
            }
            ZITI_LOG(ERROR, "no compatible signer found for enroll_mode=%d%s%s",
                     wrap->enroll_mode,
                     wrap->signer_name ? " signer=" : "",
                     wrap->signer_name ? wrap->signer_name : "");
            for (int i = 0; ev->auth.providers && ev->auth.providers[i]; i++) {
                ZITI_LOG(ERROR, "  available: %s (enrollToCert=%s, enrollToToken=%s)",
                         ev->auth.providers[i]->name,
                         ev->auth.providers[i]->can_cert_enroll ? "true" : "false",
                         ev->auth.providers[i]->can_token_enroll ? "true" : "false");
            }
            fail_future(wrap->enroll_future, ZITI_INVALID_STATE);
            wrap->enroll_future = NULL;
            ziti_shutdown(ztx);
        } else if (ev->auth.action == ziti_auth_login_external) {
            ZITI_LOG(INFO, "enrollment: open this URL to authenticate: %s", ev->auth.detail);
        } else if (ev->auth.action == ziti_auth_cannot_continue) {
            ZITI_LOG(ERROR, "enrollment: authentication failed: %s", ev->auth.error);
            fail_future(wrap->enroll_future, ZITI_AUTHENTICATION_FAILED);
            wrap->enroll_future = NULL;
            ziti_shutdown(ztx);
        }
    } else if (ev->type == ZitiAuthEvent) {
        process_auth_event(wrap, &ev->auth);
    } else if (ev->type == ZitiServiceEvent) {
        process_service_event(wrap, &ev->service);
        wrap->services_loaded = true;
        if (wrap->auth_future) {
            // if we were waiting for services to load before completing auth, do that now
            complete_future(wrap->auth_future, (void *) (uintptr_t) ztx->id, ZITI_OK);
            wrap->auth_future = NULL;
        }
    } else if (ev->type == ZitiConfigEvent && wrap->enroll_future) {
        // cert mode: wait for cert; token/none mode: any config event
        if (wrap->enroll_mode != ziti_enroll_cert || ev->cfg.config->id.cert) {
            char *cfg_json = ziti_config_to_json(ev->cfg.config, 0, NULL);
            complete_future(wrap->enroll_future, cfg_json, ZITI_OK);
            wrap->enroll_future = NULL;
            ziti_shutdown(ztx);
        }
    }
}

static void load_ziti_ctx(void *arg, future_t *f, uv_loop_t *l) {
    int rc = 0;
    struct ztx_wrap *wrap = model_map_get(&ziti_contexts, arg);

    if (wrap) {
        ZITI_LOG(WARN, "already loading ztx[%d]", wrap->ztx->id);
        complete_future(f, (void *) (uintptr_t) wrap->ztx->id, ZITI_INVALID_STATE);
        return;
    }

    ZITI_LOG(DEBUG, "loading identity from %s", (char *) arg);
    ziti_config cfg = {0};
    ziti_context ztx = NULL;

    rc = ziti_load_config(&cfg, (const char*)arg);
    if (rc != ZITI_OK) goto error;

    rc = ziti_context_init(&ztx, &cfg);
    if (rc != ZITI_OK) goto error;

    wrap = calloc(1, sizeof(struct ztx_wrap));
    wrap->ztx = ztx;
    rc = ziti_context_set_options(ztx, &(ziti_options){
            .app_ctx = wrap,
            .event_cb = on_ctx_event,
            .events = ZitiContextEvent | ZitiServiceEvent | ZitiAuthEvent,
            .refresh_interval = zl_refresh_interval,
            .config_types = configs,
    });
    if (rc != ZITI_OK) goto error;

    wrap->auth_future = f;
    rc = ziti_context_run(ztx, l);
    if (rc != ZITI_OK) goto error;

    model_map_set(&ziti_contexts, arg, wrap);

error:

    free_ziti_config(&cfg);

    if (rc != ZITI_OK) {
        fail_future(f, rc);
        ZITI_LOG(WARN, "fail to load identity file[%s]: %d/%s", (const char *) arg, rc, ziti_errorstr(rc));
        free(wrap);
        return;
    }

}

int Ziti_load_context(ziti_handle_t *h, const char *identity) {
    if (!zl_check_daemon()) {
        zl_set_error(ZITI_INVALID_STATE);
        return ZITI_INVALID_STATE;
    }

    if (h == NULL) {
        zl_set_error(ZITI_INVALID_STATE);
        return ZITI_INVALID_STATE;
    }

    if (identity == NULL) {
        *h = ZITI_INVALID_HANDLE;
        zl_set_error(ZITI_INVALID_CONFIG);
        return ZITI_INVALID_CONFIG;
    }
    future_t *f = schedule_on_loop(load_ziti_ctx, (void *) identity, true);
    void *res;
    int err = await_future(f, &res);
    zl_set_error(err);

    destroy_future(f);
    switch (err) {
        case ZITI_OK:
        case ZITI_MFA_NOT_ENROLLED:
        case ZITI_EXTERNAL_LOGIN_REQUIRED:
        case ZITI_PARTIALLY_AUTHENTICATED:
            *h = (ziti_handle_t)(uintptr_t)res;
            break;
        default:
            *h = ZITI_INVALID_HANDLE;
            break;
    }
    return err;
}

int Ziti_load_context_with_timeout(ziti_handle_t *h, const char *identity, int timeout_ms) {
    if (!zl_check_daemon()) {
        zl_set_error(ZITI_INVALID_STATE);
        return ZITI_INVALID_STATE;
    }

    if (h == NULL) {
        zl_set_error(ZITI_INVALID_STATE);
        return ZITI_INVALID_STATE;
    }

    if (identity == NULL) {
        *h = ZITI_INVALID_HANDLE;
        zl_set_error(ZITI_INVALID_CONFIG);
        return ZITI_INVALID_CONFIG;
    }

    future_t *f = schedule_on_loop(load_ziti_ctx, (void *) identity, true);
    void *res;
    int err;

    if (timeout_ms > 0) {
        err = await_future_timed(f, &res, timeout_ms);
        if (err == UV_ETIMEDOUT) {
            // Timeout occurred - we need to clean up the context that may still be running
            ZITI_LOG(WARN, "Context loading timed out after %d ms, scheduling cleanup...", timeout_ms);

            // Schedule cleanup on the looper thread to ensure thread safety
            // Don't wait for cleanup to complete - it will happen asynchronously
            // If the process is terminated (SIGTERM), uv_stop() will cancel all pending operations
            schedule_on_loop(do_timeout_cleanup, (void *)identity, false);

            err = ZITI_TIMEOUT;
        }
    } else {
        err = await_future(f, &res);
    }

    zl_set_error(err);

    destroy_future(f);
    switch (err) {
        case ZITI_OK:
        case ZITI_MFA_NOT_ENROLLED:
        case ZITI_EXTERNAL_LOGIN_REQUIRED:
        case ZITI_PARTIALLY_AUTHENTICATED:
            *h = (ziti_handle_t)(uintptr_t)res;
            break;
        default:
            *h = ZITI_INVALID_HANDLE;
            break;
    }
    return err;
}

/**
 * create bridge socket and connect client socket to it
 * @param clt_sock client socket
 * @param ziti_sock[out] bridge socket
 * @return
 */

// make sure old ziti_sock_t instance does not interfere with
// the new/reused socket fd
static void check_socket(void *arg, future_t *f, uv_loop_t *l) {
    ziti_socket_t fd = (ziti_socket_t) (uintptr_t) arg;
    ZITI_LOG(VERBOSE, "checking client fd[%d]", fd);
    ziti_sock_t *s = model_map_remove_key(&ziti_sockets, &fd, sizeof(fd));
    if (s) {
        ZITI_LOG(VERBOSE, "stale ziti_sock_t[fd=%d]", fd);
        s->fd = SOCKET_ERROR;
    }
    complete_future(f, NULL, 0);
}

ziti_socket_t Ziti_socket(int type) {
    ziti_socket_t fd = socket(AF_INET, type, 0);
    zl_set_error(fd < 0 ? errno : 0);
    if (fd > 0) {
        future_t *f = schedule_on_loop(check_socket, (void *) (uintptr_t) fd, true);
        await_future(f, NULL);
        destroy_future(f);
    }
    return fd;
}

static void close_work(void *arg, future_t *f, uv_loop_t *l) {
    ziti_socket_t fd = (ziti_socket_t) (uintptr_t) arg;
    ZITI_LOG(DEBUG, "closing client fd[%d]", fd);
    ziti_sock_t *s = model_map_remove_key(&ziti_sockets, &fd, sizeof(fd));
#if _WIN32
    closesocket(fd);
#else
    close(fd);
#endif
    complete_future(f, NULL, 0);
}

int Ziti_close(ziti_socket_t fd) {
    ziti_sock_t *s = model_map_get_key(&ziti_sockets, &fd, sizeof(fd));
    if (s) {
        ZITI_LOG(DEBUG, "closing ziti socket[%d]", fd);
        future_t *f = schedule_on_loop(close_work, (void *) (uintptr_t) fd, true);
        await_future(f, NULL);
        destroy_future(f);
        return 0;
    }
    return -1;
}

struct conn_req_s {
    ziti_socket_t fd;

    ziti_handle_t ziti_handle;
    cstr service;
    cstr terminator;

    const char *host;
    uint16_t port;
    ziti_dial_opts opts;
};



static const char* find_service(ztx_wrap_t *wrap, int type, const char *host, uint16_t port) {
    ZITI_LOG(DEBUG, "looking up %d:%s:%d", type, host, port);
    const char *service;
    ziti_intercept_cfg_v1 *intercept;

    // check for service matching host
    ziti_service *s = model_map_get(&wrap->ztx->services, host);
    if (s != NULL) {
        ZITI_LOG(DEBUG, "hostname matches service name %s", host);
        service = s->name;
        return service;
    }

    MODEL_MAP_FOREACH(service, s, &wrap->ztx->services) {
        if (strcasecmp(service, host) == 0) {
            ZITI_LOG(DEBUG, "hostname matches service name %s", host);
            return service;
        }
    }

    ziti_protocol proto = 0;
    switch (type) {
        case SOCK_STREAM:
            proto = ziti_protocols.tcp;
            break;
        case SOCK_DGRAM:
            proto = ziti_protocols.udp;
            break;
        case 0: // resolve case: any protocol can be used to assign IP address to host
            break;
        default:
            return NULL;
    }

    int score = -1;
    const char *best = NULL;
    MODEL_MAP_FOREACH(service, intercept, &wrap->intercepts) {
        int match = ziti_intercept_match(intercept, proto, host, port);
        if (match == -1) { continue; }

        if (match == 0) { return service; }

        if (score == -1 || score > match) {
            best = service;
            score = match;
        }
    }
    return best;
}

void do_timeout_cleanup(void *args, future_t *f, uv_loop_t *l) {
    char *identity = (char *)args;
    if (identity == NULL) {
        complete_future(f, NULL, ZITI_INVALID_STATE);
        return;
    }

    // Find the context that was being loaded
    ztx_wrap_t *wrap = model_map_get(&ziti_contexts, identity);
    if (wrap && wrap->ztx) {
        ZITI_LOG(DEBUG, "Cleaning up timed out context ztx[%d]", wrap->ztx->id);

        // Remove from contexts map first to prevent further access
        model_map_remove(&ziti_contexts, identity);

        // Shutdown the context properly - this will set closing=true and handle cleanup
        ziti_context_set_options(wrap->ztx, NULL);
        ziti_shutdown(wrap->ztx);
        if (wrap->auth_future) {
            fail_future(wrap->auth_future, ZITI_DISABLED);
            wrap->auth_future = NULL;
        }

        // Free the wrap
        free_wrap(wrap);
    }
    
    complete_future(f, NULL, ZITI_OK);
}

static void on_enroll(const ziti_config *cfg, int status, const char *error, void *ctx) {
    future_t *f = ctx;
    if (status != ZITI_OK) {
        fail_future(f, status);
    } else {
        char *cfg_json = ziti_config_to_json(cfg, 0, NULL);
        complete_future(f, cfg_json, 0);
    }
}

static void do_enroll(ziti_enroll_opts *opts, future_t *f, uv_loop_t *loop) {
    ziti_enroll(opts, loop, on_enroll, f);
}

int Ziti_enroll_identity(const char *jwt, const char *key, const char *cert, char **id_json, unsigned long *id_json_len) {
    if (!zl_check_daemon()) {
        return ZITI_INVALID_STATE;
    }

    ziti_enroll_opts opts = {
            .token = jwt,
            .key = key,
            .cert = cert,
    };
    future_t *f = schedule_on_loop((loop_work_cb) do_enroll, &opts, true);
    void *result;
    int rc = await_future(f, &result);
    if (rc == ZITI_OK) {
        *id_json = result;
        *id_json_len = strlen(*id_json);
    }
    destroy_future(f);
    return rc;
}

struct enroll_url_req {
    const char *url;
    const char *jwt;
    ziti_enroll_mode mode;
    const char *signer_name;
    future_t *enroll_f;
    uv_loop_t *loop;
};

static void enroll_url_bootstrap_cb(const ziti_config *cfg, int status, const char *err, void *ctx) {
    struct enroll_url_req *req = ctx;

    if (status != ZITI_OK) {
        ZITI_LOG(ERROR, "failed to bootstrap from %s: %s", req->url, err ? err : ziti_errorstr(status));
        fail_future(req->enroll_f, status);
        return;
    }

    ZITI_LOG(INFO, "bootstrapped config from %s", req->url);

    // none mode: just return the bootstrap config, no OIDC auth needed
    if (req->mode == ziti_enroll_none) {
        char *cfg_json = ziti_config_to_json(cfg, 0, NULL);
        complete_future(req->enroll_f, cfg_json, ZITI_OK);
        return;
    }

    // cfg points into the enroll request and is freed after this callback returns,
    // but ziti_context_init copies everything it needs
    ziti_context ztx = NULL;
    int rc = ziti_context_init(&ztx, cfg);
    if (rc != ZITI_OK) {
        fail_future(req->enroll_f, rc);
        return;
    }

    ztx_wrap_t *wrap = calloc(1, sizeof(ztx_wrap_t));
    wrap->ztx = ztx;
    wrap->enroll_future = req->enroll_f;
    wrap->enroll_mode = req->mode;
    wrap->signer_name = req->signer_name;

    ziti_context_set_options(ztx, &(ziti_options){
            .app_ctx = wrap,
            .event_cb = on_ctx_event,
            .events = ZitiContextEvent | ZitiAuthEvent | ZitiConfigEvent,
            .enroll_mode = req->mode,
    });

    ziti_context_run(ztx, req->loop);
}

static void do_enroll_url(void *arg, future_t *f, uv_loop_t *l) {
    struct enroll_url_req *req = arg;
    req->loop = l;

    int rc;
    if (req->jwt) {
        ziti_enroll_opts opts = {
            .url = (char *)req->url,
            .token = (char *)req->jwt,
        };
        rc = ziti_enroll(&opts, l, enroll_url_bootstrap_cb, req);
    } else {
        rc = ziti_enroll_url(req->url, l, enroll_url_bootstrap_cb, req);
    }
    if (rc != ZITI_OK) {
        fail_future(req->enroll_f, rc);
    }
}

int Ziti_enroll_controller(const char *url, const char *jwt, ziti_enroll_mode mode,
                           const char *signer_name,
                           char **id_json, unsigned long *id_json_len) {
    if ((url == NULL && jwt == NULL) || id_json == NULL || id_json_len == NULL) {
        return ZITI_INVALID_STATE;
    }

    if (!zl_check_daemon()) {
        return ZITI_INVALID_STATE;
    }

    future_t *enroll_f = new_future();
    struct enroll_url_req *req = calloc(1, sizeof(struct enroll_url_req));
    req->url = url;
    req->jwt = jwt;
    req->mode = mode;
    req->signer_name = signer_name;
    req->enroll_f = enroll_f;

    // schedule context creation - auth events drive signer selection and OIDC
    schedule_on_loop((loop_work_cb) do_enroll_url, req, false);

    // wait for enrollment to complete (config event with cert)
    void *result;
    int rc = await_future(enroll_f, &result);
    if (rc == ZITI_OK) {
        *id_json = result;
        *id_json_len = strlen(*id_json);
    }
    destroy_future(enroll_f);
    free(req);
    return rc;
}

static model_map host_to_ip;
static model_map ip_to_host;

static in_addr_t addr_counter = 0x64400000; // 100.64.0.0
static void resolve_cb(void *r, future_t *f) {
    struct conn_req_s *req = r;

    ZITI_LOG(DEBUG, "resolving %s", req->host);
    in_addr_t ip = (in_addr_t)(intptr_t)model_map_get(&host_to_ip, req->host);
    if (ip == 0) {
        const char *service_name = NULL;
        MODEL_MAP_FOR(it, ziti_contexts) {
            ztx_wrap_t *wrap = model_map_it_value(it);
            service_name = find_service(wrap, 0, req->host, req->port);
            if (service_name) {
                ZITI_LOG(DEBUG, "%s:%d => %s", req->host, req->port, service_name);
                break;
            }
        }

        if (service_name == NULL) {
            fail_future(f, EAI_NONAME);
            return;
        }

        ip = htonl(++addr_counter);
        ZITI_LOG(DEBUG, "assigned %s => %x", req->host, ip);
        model_map_set(&host_to_ip, req->host, (void *) (uintptr_t) ip);
        model_map_set_key(&ip_to_host, &ip, sizeof(ip), strdup(req->host));
    }

    complete_future(f, (void *) (uintptr_t) ip, 0);
}

ZITI_FUNC
void Ziti_freeaddrinfo(struct addrinfo *addrlist) {
    uv_freeaddrinfo(addrlist);
}

static bool is_internal(const char *host) {
    // refuse resolving controller/router addresses here
    // this way Ziti context can operate even if resolve was high-jacked (e.g. notify)
    MODEL_MAP_FOR(it, ziti_contexts) {
        ztx_wrap_t *wrap = model_map_it_value(it);
        if (wrap->ztx == NULL) continue;

        const char *ctrl = ziti_get_controller(wrap->ztx);
        struct tlsuv_url_s url;
        tlsuv_parse_url(&url, ctrl);

        if (strncmp(host, url.hostname, url.hostname_len) == 0) {
            return true;
        }

        if (wrap->ztx) {
            MODEL_MAP_FOR(chit, wrap->ztx->channels) {
                ziti_channel_t *ch = model_map_it_value(chit);
                if (strcmp(zch_get_host(ch), host) == 0) {
                    return true;
                }
            }
        }
    }
    return false;
}

ZITI_FUNC
int Ziti_resolve(const char *host, const char *port, const struct addrinfo *hints, struct addrinfo **addrlist) {
    if (host == NULL) {
        return EAI_NONAME;
    }

    int socktype = 0;
    int proto = 0;
    if (hints) {
        socktype = hints->ai_socktype;
        switch (hints->ai_socktype) {
            case SOCK_STREAM:proto = IPPROTO_TCP;break;
            case SOCK_DGRAM:proto = IPPROTO_UDP;break;
            case 0:proto = 0;break;// any type
            default: // no other protocols are supported
                return -1;
        }
    }

    // refuse resolving controller/router addresses here
    // this way Ziti context can operate even if resolve was high-jacked (e.g. zitify)
    if (is_internal(host)) {
        return -1;
    }

    struct addrinfo h = {
        .ai_family = AF_INET6,
        .ai_socktype = socktype,
        .ai_protocol = proto,
        .ai_flags = NI_NUMERICHOST | NI_NUMERICSERV,
    };
    // make sure res is allocated by the system getaddrinfo
    // so it can be freed by freeaddrinfo/uv_freeaddrinfo
    struct addrinfo *res = NULL;
    getaddrinfo("::1", port, &h, &res); // this should never fail
    assert(res != NULL);

    in_port_t portnum = port ? (in_port_t) strtol(port, NULL, 10) : 0;
    ZITI_LOG(DEBUG, "host[%s] port[%s]", host, port);
    res->ai_socktype = socktype;
    res->ai_protocol = proto;

    struct sockaddr *addr = res->ai_addr;
    int rc = 0;
    if ((rc = uv_ip4_addr(host, portnum, (struct sockaddr_in *)addr)) == 0) {
        ZITI_LOG(DEBUG, "host[%s] port[%s] rc = %d", host, port, rc);

        res->ai_family = AF_INET;
        res->ai_addrlen = sizeof(struct sockaddr_in);

        *addrlist = res;
        return 0;
    } else if (uv_ip6_addr(host, portnum, (struct sockaddr_in6 *) addr) == 0) {
        ZITI_LOG(DEBUG, "host[%s] port[%s] rc = %d", host, port, rc);

        res->ai_family = AF_INET6;
        res->ai_addrlen = sizeof(struct sockaddr_in6);
        *addrlist = res;
        return 0;
    }

    MODEL_MAP_FOR(it, ziti_contexts) {
        ztx_wrap_t *ztx = model_map_it_value(it);
        await_future(ztx->services_loaded_f, NULL);
    }

    struct conn_req_s req = {
            .ziti_handle = ZITI_INVALID_HANDLE,
            .host = host,
            .port = portnum,
    };

    future_t *f = schedule_on_loop((loop_work_cb) resolve_cb, &req, true);
    uintptr_t result;
    int err = await_future(f, (void **) &result);
    zl_set_error(err);

    if (err == 0) {
        struct sockaddr_in *addr4 = (struct sockaddr_in *) res->ai_addr;
        addr4->sin_family = AF_INET;
        addr4->sin_port = htons(portnum);
        addr4->sin_addr.s_addr = (in_addr_t)result;

        res->ai_family = AF_INET;
        res->ai_socktype = socktype;
        res->ai_addrlen = sizeof(*addr4);
        *addrlist = res;
    } else {
        freeaddrinfo(res);
    }
    destroy_future(f);

    return err == 0 ? 0 : -1;
}

int Ziti_check_socket(ziti_socket_t fd) {
    ziti_sock_t *sock = model_map_get_key(&ziti_sockets, &fd, sizeof(fd));
    if (sock == NULL) return 0;
    if (sock->server) return 2;
    return 1;
}

ZITI_FUNC
const char *Ziti_lookup(in_addr_t addr) {
    const char *hostname = model_map_get_key(&ip_to_host, &addr, sizeof(addr));
    return hostname;
}

ZITI_FUNC
void Ziti_free(void *o) {
    if (o) {
        free(o);
    }
}

struct signers_req_s {
    ziti_handle_t ziti_handle;
    ztx_wrap_t *wrap;
    future_t *f;
};

static void signers_cb(ziti_context ztx, int rc, ziti_jwt_signer_array arr, void *arg) {
    struct signers_req_s *req = arg;
    if (rc != ZITI_OK) {
        ZITI_LOG(ERROR, "failed to get signers: %d/%s", rc, ziti_errorstr(rc));
        fail_future(req->f, rc);
        return;
    }
    ztx_wrap_t *w = req->wrap;
    int i;
    for (i = 0; w->signers && w->signers[i]; i++) {
        free((void*)w->signers[i]);
    }
    free(w->signers);

    for (i = 0; arr && arr[i]; i++);

    char **signers = calloc(i + 1, sizeof(char*));
    for (i = 0; arr && arr[i]; i++) {
        signers[i] = strdup(arr[i]->name);
    }

    req->wrap->signers = signers;
    complete_future(req->f, signers, 0);
}

static void get_signers(void *arg, future_t *f, uv_loop_t *loop) {
    struct signers_req_s *req = arg;
    ztx_wrap_t *wrap = zl_find_wrap(req->ziti_handle);
    if (wrap == NULL) {
        fail_future(f, EINVAL);
        return;
    }

    req->wrap = wrap;
    req->f = f;
    ziti_get_ext_jwt_signers(wrap->ztx, signers_cb, req);
}

const char * const *  Ziti_get_ext_signers(ziti_handle_t ztx) {
    if (ztx == ZITI_INVALID_HANDLE || !zl_check_daemon()) {
        zl_set_error(EINVAL);
        return NULL;
    }

    struct signers_req_s req = {
            .ziti_handle = ztx,
    };

    future_t *f = schedule_on_loop(get_signers, &req, true);
    const char * const * signers = NULL;
    int err = await_future(f, (void **) &signers);
    destroy_future(f);
    zl_set_error(err);
    return signers;
}


struct login_req_s {
    ziti_handle_t ziti_handle;
    const char *signer_name;
    const char *code;
};

static void on_ext_login(ziti_context ztx, const char *url, void *ctx) {
    future_t *f = ctx;
    if (url == NULL) {
        fail_future(f, EINVAL);
    } else {
        char *login_url = strdup(url);
        complete_future(f, login_url, 0);
    }
}

static void start_ext_login(void *arg, future_t *f, uv_loop_t *loop) {
    struct login_req_s *req = arg;
    ztx_wrap_t *wrap = zl_find_wrap(req->ziti_handle);
    if (wrap == NULL) {
        fail_future(f, EINVAL);
        return;
    }

    int err = ziti_ext_auth(wrap->ztx, on_ext_login, f);
    if (err != ZITI_OK) {
        fail_future(f, err);
    }
}

static void set_ext_signer(void *arg, future_t *f, uv_loop_t *loop) {
    struct login_req_s *req = arg;
    ztx_wrap_t *wrap = zl_find_wrap(req->ziti_handle);
    if (wrap == NULL) {
        fail_future(f, EINVAL);
        return;
    }

    assert(wrap->auth_future == NULL);
    int err = ziti_use_ext_jwt_signer(wrap->ztx, req->signer_name);
    if (err == ZITI_OK) {
        wrap->auth_future = f;
    } else {
        fail_future(f, err);
    }
}

char* Ziti_login_external(ziti_handle_t ztx, const char *signer_name) {

    if (ztx == ZITI_INVALID_HANDLE || !zl_check_daemon()) {
        zl_set_error(EINVAL);
        return NULL;
    }

    struct login_req_s req = {
            .ziti_handle = ztx,
            .signer_name = signer_name,
    };

    future_t *f = schedule_on_loop(set_ext_signer, &req, true);

    int err = await_future(f, NULL);
    destroy_future(f);

    if (err != ZITI_EXTERNAL_LOGIN_REQUIRED) {
        zl_set_error(err);
        return NULL;
    }

    f = schedule_on_loop(start_ext_login, &req, true);
    char *login_url = NULL;
    err = await_future(f, (void **) &login_url);
    zl_set_error(err);
    destroy_future(f);
    return login_url;
}

static void on_totp_login(ziti_context ztx, int status, void *ctx) {
    ztx_wrap_t *wrap = ctx;
    
    if (wrap->auth_future == NULL) return;
    
    if (status != ZITI_OK) {
        fail_future(wrap->auth_future, status);
    } else {
        complete_future(wrap->auth_future, ztx, 0);
    }
    wrap->auth_future = NULL;
}

static void do_totp_login(void *arg, future_t *f, uv_loop_t *l) {
    struct login_req_s *req = arg;
    
    ziti_handle_t ztx = (ziti_handle_t)(uintptr_t)req->ziti_handle;
    ztx_wrap_t *wrap = zl_find_wrap(ztx);
    if (wrap == NULL) {
        fail_future(f, EINVAL);
        return;
    }
    
    if (wrap->auth_future != NULL) {
        ZITI_LOG(WARN, "another auth operation is in progress for ztx[%d]", ztx);
        fail_future(f, ZITI_INVALID_STATE);
        return;
    }

    if (wrap->ztx->auth_state != ZitiAuthStatePartiallyAuthenticated) {
        fail_future(f, ZITI_INVALID_STATE);
        return;
    }
    
    wrap->auth_future = f;
    ziti_mfa_auth(wrap->ztx, req->code, on_totp_login, wrap);
}

int Ziti_login_totp(ziti_handle_t ztx, const char *code) {
    if (ztx == ZITI_INVALID_HANDLE || !zl_check_daemon()) {
        return ZITI_INVALID_STATE;
    }

    struct login_req_s req = {
            .ziti_handle = ztx,
            .code = code,
    };

    future_t *f = schedule_on_loop(do_totp_login, &req, true);
    int err = await_future(f, NULL);
    return err;
}

static void wait_for_auth_cb(void *arg, future_t *f, uv_loop_t *l) {
    ziti_handle_t h = (ziti_handle_t)(uintptr_t)arg;
    ztx_wrap_t *wrap = zl_find_wrap(h);
    if (wrap == NULL) {
        fail_future(f, EINVAL);
        return;
    }

    if (wrap->ztx->auth_state == ZitiAuthStateFullyAuthenticated) {
        complete_future(f, NULL, 0);
        return;
    }

    if (wrap->ztx->auth_state == ZitiAuthImpossibleToAuthenticate) {
        fail_future(f, ZITI_AUTHENTICATION_FAILED);
        return;
    }

    assert(wrap->auth_future == NULL);
    wrap->auth_future = f;
}

int Ziti_wait_for_auth(ziti_handle_t ztx, int timeout_ms) {
    if (ztx == ZITI_INVALID_HANDLE || !zl_check_daemon()) {
        return ZITI_INVALID_STATE;
    }
    future_t *f = schedule_on_loop(wait_for_auth_cb, (void *)(uintptr_t)ztx, true);
    int err = await_future_timed(f, NULL, timeout_ms);
    destroy_future(f);
    if(err == UV_ETIMEDOUT) {
        err = ZITI_TIMEOUT;
    }
    return err;
}