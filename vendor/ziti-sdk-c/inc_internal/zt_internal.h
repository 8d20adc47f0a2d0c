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

#ifndef ZT_SDK_ZT_INTERNAL_H
#define ZT_SDK_ZT_INTERNAL_H


#include <stdbool.h>
#include <tlsuv/tlsuv.h>
#include <tlsuv/queue.h>

#include <ziti/ziti.h>

#include "auth_method.h"
#include "buffer.h"
#include "credentials.h"
#include "deadline.h"
#include "metrics.h"
#include "pool.h"
#include "stickiness.h"
#include "utils.h"
#include "ziti_ctrl.h"

#include <sodium.h>

#if !defined(UUID_STR_LEN)
#define UUID_STR_LEN 37
#endif

#define ZTX_LOG(lvl, fmt, ...) ZITI_LOG(lvl, "ztx[%u] " fmt, ztx->id, ##__VA_ARGS__)

#define DST_PROTOCOL "dst_protocol"
#define DST_HOSTNAME "dst_hostname"
#define DST_PORT "dst_port"

#define ZITI_LOG_ERROR(level, e, fmt, ...) do{\
const char *reason = model_map_get(&e->cause, "reason");\
ZITI_LOG(level, fmt " %s[%s] reason[%s]", ##__VA_ARGS__, e->code, e->message, reason ? reason : ""); \
} while(0)


extern const char *APP_ID;
extern const char *APP_VERSION;

typedef struct message_s message;
typedef struct hdr_s hdr_t;

typedef struct ziti_channel ziti_channel_t;

typedef void (*reply_cb)(void *ctx, message *m, int err);

typedef void (*ch_notify_state)(
        ziti_channel_t *ch, ziti_router_status status, int err, void *ctx);

typedef int (*dump_fn)(void *arg, FORMAT_STRING(const char *fmt), ...) ziti_printf_args(2, 3);

struct ziti_write_req_s {
    struct ziti_conn *conn;
    struct ziti_channel *ch;
    const uint8_t *buf;
    size_t len;
    bool eof;
    bool close;

    struct message_s *message;
    ziti_write_cb cb;
    uint64_t start_ts;

    void *ctx;

    TAILQ_ENTRY(ziti_write_req_s) _next;
    model_list chain;
    size_t chain_len;
};

struct process {
    char *path;
    bool is_running;
    char *sha_512_hash;
    char **signers;
    int num_signers;
};

typedef void (*ztx_work_f)(ziti_context ztx, void *w_ctx);

struct ztx_work_s {
    ztx_work_f w;
    void *w_data;
    STAILQ_ENTRY(ztx_work_s) _next;
};

typedef STAILQ_HEAD(work_q, ztx_work_s) ztx_work_q;


struct ziti_ctx {
    ziti_config config;
    ziti_options opts;
    ziti_controller ctrl;
    uint32_t id;

    model_map ctrl_details;

    tls_context *tlsCtx;
    struct tls_credentials id_creds;

    bool closing;
    bool enabled;
    int ctrl_status;

    ziti_auth_method_t *auth_method;
    ziti_auth_state auth_state;
    ziti_mfa_cb mfa_cb;
    void *mfa_ctx;
    model_map ext_jwt_tokens; // map<issuer, zt_jwt>

    model_map ext_signers;
    struct ext_oidc_client_s *ext_auth;
    void (*ext_launch_cb)(ziti_context, const char*, void*);
    void *ext_launch_ctx;
    ziti_enroll_key_cb enroll_key_cb;
    void *enroll_key_ctx;

    // HA access_token(JWT) or legacy ziti_api_session.token
    cstr session_token;
    ziti_identity_data *identity_data;
    ziti_api_session *session;

    bool services_loaded;
    // map<name,ziti_service>
    model_map services;
    // map<service_id,ziti_session>
    model_map sessions;

    sticky_tokens_map sticky_tokens;

    // map<service_id,*bool>
    model_map service_forced_updates;

    char *last_update;

    tls_context *channel_tls;
    struct tls_credentials session_creds;
    deadline_t session_creds_deadline;
    // map<erUrl,ziti_channel>
    model_map channels;
    // map<id,ziti_conn>
    model_map connections;

    // map<conn_id,conn_id> -- connections waiting for a suitable channel
    // map to make removal easier
    model_map waiting_connections;

    uint32_t conn_seq;

    /* context wide metrics */
    uint64_t start;
    rate_t up_rate;
    rate_t down_rate;

    /* posture check support */
    struct posture_checks *posture_checks;

    /* auth query (MFA) support */
    struct auth_queries *auth_queries;

    deadline_t refresh_deadline;
    deadline_t api_session_deadline;
    deadline_t ca_bundle_deadline;
    deadline_list_t deadlines;

    uv_loop_t *loop;
    uv_timer_t deadline_timer;

    uv_prepare_t prepper;
    ztx_work_q w_queue;
};

#ifdef __cplusplus
extern "C" {
#endif

ziti_controller *ztx_get_controller(ziti_context ztx);

void ziti_invalidate_session(ziti_context ztx, const char *service_id, ziti_session_type type);

void ziti_on_channel_event(ziti_channel_t *ch, ziti_router_status status, int err, ziti_context ztx);

void ziti_force_api_session_refresh(ziti_context ztx);

const char* ziti_get_api_session_token(ziti_context ztx);

int ziti_close_channels(ziti_context ztx, int err);

bool ziti_channel_is_connected(ziti_channel_t *ch);

uint zch_get_id(ziti_channel_t *ch);
const char* zch_get_host(ziti_channel_t *ch);
const char* zch_get_url(ziti_channel_t *ch);
const char* zch_get_name(ziti_channel_t *ch);
const char* zch_get_version(ziti_channel_t *ch);
uint64_t zch_connect_time(ziti_channel_t *ch);
uint64_t zch_latency(ziti_channel_t *ch);
bool zch_can_accept_posture(ziti_channel_t *ch);

void zch_dump(ziti_channel_t *ch, dump_fn, void *print_ctx);

void ziti_channel_set_url(ziti_channel_t *ch, const char *url);

int ziti_channel_force_connect(ziti_channel_t *ch);

int ziti_channel_update_token(ziti_channel_t *ch, const char *token);

int ziti_channel_update_posture(ziti_channel_t *ch, const uint8_t *data, size_t len);

int ziti_channel_connect(ziti_context ztx, const ziti_edge_router *er);

int ziti_channel_prepare(ziti_channel_t *ch);

int ziti_channel_disconnect(ziti_channel_t *ch, int err);
int ziti_channel_close(ziti_channel_t *ch, int err);

void ziti_channel_add_receiver(ziti_channel_t *ch, uint32_t id, void *receiver, void (*receive_f)(void *, message *, int));

void ziti_channel_rem_receiver(ziti_channel_t *ch, uint32_t id);

int ziti_channel_send_message(ziti_channel_t *ch, message *msg, struct ziti_write_req_s *ziti_write);

int ziti_channel_send(ziti_channel_t *ch, uint32_t content, const hdr_t *hdrs, int nhdrs, const uint8_t *body,
                      uint32_t body_len,
                      struct ziti_write_req_s *ziti_write);

struct waiter_s *
ziti_channel_send_for_reply(ziti_channel_t *ch, uint32_t content, const hdr_t *headers, int nhdrs, const uint8_t *body,
                            uint32_t body_len, reply_cb,
                            void *reply_ctx);

void ziti_channel_remove_waiter(ziti_channel_t *ch, struct waiter_s *waiter);


void ziti_queue_work(ziti_context ztx, ztx_work_f w, void *data);

void ziti_force_service_update(ziti_context ztx, const char *service_id);

void ziti_services_refresh(ziti_context ztx, bool now);

extern void ziti_send_event(ziti_context ztx, const ziti_event_t *e);
void ztx_config_update(ziti_context ztx);

void reject_dial_request(uint32_t conn_id, ziti_channel_t *ch, uint32_t req_id, const char *reason);

// returns true if controller version supports enrollment (v2.0+ or dev builds)
static inline bool ctrl_version_supports_enroll_to(const char *ctrl_ver) {
    if (ctrl_ver == NULL) return true; // unknown version, assume ok
    const char *vnum = ctrl_ver[0] == 'v' ? ctrl_ver + 1 : ctrl_ver;
    int major = atoi(vnum);
    return major == 0 || major >= 2; // 0 = dev build
}

const ziti_env_info* get_env_info();

int ztx_init_external_auth(ziti_context ztx, const ziti_jwt_signer *signer);
void ztx_dump_external_auth(ziti_context ztx, int (*printer)(void *arg, const char *fmt, ...), void *ctx);
extern void ztx_request_session_cert(ziti_context ztx);
extern void ztx_clear_session_creds(ziti_context ztx);

void ztx_auth_state_cb(void *, ziti_auth_state , const void *);
ziti_channel_t * ztx_get_channel(ziti_context ztx, const ziti_edge_router *er);

#define ztx_set_deadline(ztx, timeout, d, cb, ctx) do_ztx_set_deadline((ztx), (timeout), (d), (void (*)(void *))(cb), (FILE_BASENAME":"#cb), (ctx))
void do_ztx_set_deadline(ziti_context ztx, uint64_t timeout, deadline_t *d, void (*cb)(void *), const char *cb_name, void *ctx);

int ch_send_conn_closed(ziti_channel_t *ch, uint32_t conn_id);

#ifdef __cplusplus
}
#endif
#endif //ZT_SDK_ZT_INTERNAL_H
