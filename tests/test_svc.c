/*  test_svc: bas_svc_dispatch, the one reader of every message socket, and
    its policy for a message no handler takes.

    In process: a bas_svc with no HTTP server and no tap, a ROUTER and a
    DEALER on inproc://. The socket under test is given a handler table
    with bas_svc_dispatch; the test reads through the reactor (a few
    turns of zloop) or through bas_svc_dispatch_now, and checks:
    - a message of a type in the table reaches its handler with `arg`, and
      a handler may keep the body it takes;
    - a type the table lacks and a frame that does not decode are counted
      in basalt_decode_errors_total{peer,socket,reason} and, on a ROUTER
      that answers, answered with an Error: ERROR_CODE_UNHANDLED_TYPE (404,
      about_type naming the type) or ERROR_CODE_MALFORMED (400, the reason);
    - a DEALER never answers (it has no identity to answer to), it counts;
    - bas_svc_reader_end ends a dispatch like any reader.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_msg.h"
#include "bas_svc.h"

#define S_WAIT_MS 5000

typedef struct {
    int readies;             // Ready messages handled
    int credits;             // their credits, summed
    void *arg_seen;          // the arg the handler was called with
    Basalt__V1__Ready *kept; // a body the handler took
} s_seen_t;

static int
s_on_ready (void *arg, bas_msg_t *msg)
{
    s_seen_t *seen = arg;
    Basalt__V1__Ready *ready = (Basalt__V1__Ready *)msg->body;
    seen->readies++;
    seen->credits += ready->credits;
    seen->arg_seen = arg;
    //  Take the body: the dispatcher must not free it after the handler.
    if (!seen->kept) {
        seen->kept = ready;
        msg->body = NULL;
    }
    return 0;
}

static const bas_handler_t s_table[] = {
    {&basalt__v1__ready__descriptor, s_on_ready},
    {NULL, NULL},
};

static bas_svc_t *
s_svc (void)
{
    static const bas_flag_t flags[] = {
        {"http", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, http), "ADDR", "http"},
        {"log-format", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, log_format), "F", "log"},
        {"v", BAS_FLAG_INT, offsetof (bas_svc_flags_t, verbosity), "N", "v"},
        {NULL},
    };
    static bas_svc_flags_t config;
    memset (&config, 0, sizeof config);
    char *argv[] = {"test-svc", NULL};
    int code = 0;
    bas_svc_t *svc = bas_svc_new ("test-svc", "test", flags, &config, &config, 1, argv, &code);
    assert_non_null (svc);
    return svc;
}

//  A bound ROUTER and a DEALER connected to it, on an endpoint unique to `name`.
static void
s_pair (const char *name, zsock_t **router_p, zsock_t **dealer_p)
{
    *router_p = zsock_new_router (NULL);
    assert_non_null (*router_p);
    assert_int_equal (zsock_bind (*router_p, "inproc://test-svc-%s", name), 0);
    *dealer_p = zsock_new_dealer (NULL);
    assert_non_null (*dealer_p);
    assert_int_equal (zsock_connect (*dealer_p, "inproc://test-svc-%s", name), 0);
    zsock_set_rcvtimeo (*dealer_p, S_WAIT_MS);
}

//  Wait until `sock` has a message, then dispatch it now.
static void
s_dispatch_next (bas_svc_t *svc, zsock_t *sock)
{
    zpoller_t *poller = zpoller_new (sock, NULL);
    assert_ptr_equal (zpoller_wait (poller, S_WAIT_MS), sock);
    zpoller_destroy (&poller);
    assert_int_equal (bas_svc_dispatch_now (svc, sock), 0);
}

//  basalt_decode_errors_total for one peer, socket and reason.
static double
s_errors (bas_svc_t *svc, const char *peer, const char *socket, const char *reason)
{
    char labels[256];
    snprintf (labels, sizeof labels, "peer=\"%s\",socket=\"%s\",reason=\"%s\"", peer, socket,
              reason);
    return bas_metrics_get (bas_svc_metrics (svc), "basalt_decode_errors_total", labels);
}

//  The next message on `dealer`, which must be an Error; owned by the caller.
static Basalt__V1__Error *
s_error_answer (zsock_t *dealer)
{
    zmsg_t *wire = zmsg_recv (dealer);
    assert_non_null (wire);
    bas_msg_t msg;
    assert_int_equal (bas_msg_decode (&wire, false, &msg), BAS_MSG_OK);
    assert_ptr_equal (msg.desc, &basalt__v1__error__descriptor);
    Basalt__V1__Error *e = (Basalt__V1__Error *)msg.body;
    msg.body = NULL;
    bas_msg_clear (&msg);
    return e;
}

static void
s_send_frames (zsock_t *sock, const char *type, const char *header, const char *body)
{
    zmsg_t *m = zmsg_new ();
    zmsg_addstr (m, type);
    if (header)
        zmsg_addstr (m, header);
    if (body)
        zmsg_addstr (m, body);
    assert_int_equal (zmsg_send (&m, sock), 0);
}

//  A ROUTER serving requests: handled, unhandled and undecodable messages.
static void
test_router_policy (void **state)
{
    (void)state;
    bas_svc_t *svc = s_svc ();
    zsock_t *router, *dealer;
    s_pair ("router", &router, &dealer);
    bas_stream_t answers, stream;
    bas_stream_init (&answers, "test-svc", 1);
    bas_stream_init (&stream, "peer", 2);
    s_seen_t seen = {0};
    assert_int_equal (
        bas_svc_dispatch (svc, router, &answers, s_table, &seen, "requests", "session", true), 0);

    //  A type in the table: its handler, with arg; no answer.
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 5;
    assert_int_equal (bas_msg_send (dealer, &stream, NULL, &ready.base), 0);
    s_dispatch_next (svc, router);
    assert_int_equal (seen.readies, 1);
    assert_int_equal (seen.credits, 5);
    assert_ptr_equal (seen.arg_seen, &seen);
    assert_non_null (seen.kept); // still ours: not freed by the dispatcher
    assert_int_equal (seen.kept->credits, 5);
    basalt__v1__ready__free_unpacked (seen.kept, NULL);
    assert_false (zsock_events (dealer) & ZMQ_POLLIN);

    //  A type the table lacks: counted, answered 404 naming the type.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    assert_int_equal (bas_msg_send (dealer, &stream, NULL, &hb.base), 0);
    s_dispatch_next (svc, router);
    Basalt__V1__Error *e = s_error_answer (dealer);
    assert_int_equal (e->code, BASALT__V1__ERROR_CODE__ERROR_CODE_UNHANDLED_TYPE);
    assert_int_equal (e->code, 404); // the number on the wire, as before the enum
    assert_string_equal (e->about_type, "basalt.v1.Heartbeat");
    basalt__v1__error__free_unpacked (e, NULL);
    assert_true (s_errors (svc, "session", "requests", "no_handler") == 1);

    //  Frames that do not decode: counted by reason, answered 400.
    s_send_frames (dealer, "basalt.v1.NoSuchType", "x", "y");
    s_dispatch_next (svc, router);
    e = s_error_answer (dealer);
    assert_int_equal (e->code, BASALT__V1__ERROR_CODE__ERROR_CODE_MALFORMED);
    assert_int_equal (e->code, 400);
    assert_string_equal (e->message, "unknown_type");
    assert_null (e->about_type);
    basalt__v1__error__free_unpacked (e, NULL);
    assert_true (s_errors (svc, "session", "requests", "unknown_type") == 1);
    s_send_frames (dealer, "basalt.v1.Ready", NULL, NULL);
    s_dispatch_next (svc, router);
    e = s_error_answer (dealer);
    assert_int_equal (e->code, BASALT__V1__ERROR_CODE__ERROR_CODE_MALFORMED);
    assert_string_equal (e->message, "truncated");
    basalt__v1__error__free_unpacked (e, NULL);
    assert_true (s_errors (svc, "session", "requests", "truncated") == 1);

    //  Nothing to read: nothing counted, nothing answered.
    assert_int_equal (bas_svc_dispatch_now (svc, router), 0);
    assert_int_equal (seen.readies, 1);
    assert_false (zsock_events (dealer) & ZMQ_POLLIN);

    bas_svc_reader_end (svc, router);
    assert_int_equal (bas_svc_dispatch_now (svc, router), -1);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
}

//  A DEALER (a binder's, a replica's) counts a message it does not take
//  and answers nothing, even when asked to: it has no identity to answer.
static void
test_dealer_never_answers (void **state)
{
    (void)state;
    bas_svc_t *svc = s_svc ();
    zsock_t *router, *dealer;
    s_pair ("dealer", &router, &dealer);
    bas_stream_t answers, stream;
    bas_stream_init (&answers, "test-svc", 1);
    bas_stream_init (&stream, "cache-svc", 2);
    s_seen_t seen = {0};
    assert_int_equal (
        bas_svc_dispatch (svc, dealer, &answers, s_table, &seen, "work", "cache-svc", true), 0);
    //  The ROUTER needs the dealer's identity: the dealer speaks first.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    assert_int_equal (bas_msg_send (dealer, &stream, NULL, &hb.base), 0);
    zframe_t *identity = zframe_recv (router);
    assert_non_null (identity);
    zmsg_t *rest = zmsg_recv (router);
    zmsg_destroy (&rest);

    assert_int_equal (bas_msg_send (router, &stream, identity, &hb.base), 0);
    s_dispatch_next (svc, dealer);
    //  One frame after the identity: truncated.
    zmsg_t *garbage = zmsg_new ();
    zmsg_append (garbage, &(zframe_t *){zframe_dup (identity)});
    zmsg_addstr (garbage, "garbage");
    assert_int_equal (zmsg_send (&garbage, router), 0);
    s_dispatch_next (svc, dealer);
    assert_true (s_errors (svc, "cache-svc", "work", "no_handler") == 1);
    assert_true (s_errors (svc, "cache-svc", "work", "truncated") == 1);
    assert_int_equal (seen.readies, 0);
    zpoller_t *poller = zpoller_new (router, NULL);
    assert_null (zpoller_wait (poller, 200)); // no answer came back
    zpoller_destroy (&poller);

    zframe_destroy (&identity);
    bas_svc_reader_end (svc, dealer);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
}

static int
s_stop (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    (void)arg;
    return -1;
}

//  Through the reactor: a dispatch is a reader like any other.
static void
test_reactor_dispatches (void **state)
{
    (void)state;
    bas_svc_t *svc = s_svc ();
    zsock_t *router, *dealer;
    s_pair ("reactor", &router, &dealer);
    bas_stream_t answers, stream;
    bas_stream_init (&answers, "test-svc", 1);
    bas_stream_init (&stream, "binder", 2);
    s_seen_t seen = {0};
    assert_int_equal (
        bas_svc_dispatch (svc, router, &answers, s_table, &seen, "workers", "binder", true), 0);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 1;
    for (int i = 0; i < 3; i++)
        assert_int_equal (bas_msg_send (dealer, &stream, NULL, &ready.base), 0);
    int64_t until = bas_mono_ms () + S_WAIT_MS;
    while (seen.readies < 3 && bas_mono_ms () < until) {
        zloop_timer (bas_svc_loop (svc), 20, 1, s_stop, NULL);
        zloop_start (bas_svc_loop (svc));
    }
    assert_int_equal (seen.readies, 3);
    assert_int_equal (seen.credits, 3);
    basalt__v1__ready__free_unpacked (seen.kept, NULL);
    //  Its turns are timed under its name.
    const char *what = NULL;
    bas_svc_turn_max (svc, &what);
    assert_string_equal (what, "workers");
    bas_svc_reader_end (svc, router);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    zsys_set_linger (0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_router_policy),
        cmocka_unit_test (test_dealer_never_answers),
        cmocka_unit_test (test_reactor_dispatches),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
