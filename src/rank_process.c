/* rank_process.c -- a rank process: one rank of a run whose ranks are
 * processes (started by the controller, or by hand on another machine).
 *
 * It joins the job over its link to the controller (rank_link.c: HELLO with
 * the token, its rank and the address it listens on; WELCOME with the run's
 * settings and every rank's address) -- its engine's rank_setup does the
 * joining, as it knows what the peers must learn (the tcp engine's mesh
 * address) -- then runs the script on its one rank with its engine, which
 * drives the link: the rank's events go up, its gates ask the controller. At
 * the end it says BYE and stays until the controller ends the job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectives.h"
#include "engine.h"
#include "errmsg.h"
#include "heartbeat.h"
#include "launch.h"
#include "rank_link.h"
#include "wire.h"
#include "world.h"

#define CONNECT_SECONDS 30.0  /* to reach the controller: it may start later */

typedef struct rank_proc {
    const cs_run_opts *o;
    const cs_engine_kind *kind;
    int rank, world;
    char token[CS_WIRE_TOKEN + 1];
    double heartbeat;     /* seconds of the controller's silence before leaving; 0: never */
    FILE *err;
} rank_proc;

static int check_options(rank_proc *rp) {
    const cs_run_opts *o = rp->o;
    if (!rp->kind || !(rp->kind->caps & CS_ENGINE_PROCESSES)) {
        cs_errf(rp->err, "--worker: the %s engine does not run its ranks as processes\n",
                rp->kind ? rp->kind->name : "chosen");
        return -1;
    }
    const char *tok = o->token ? o->token : getenv("COMMSIM_TOKEN");
    if (!tok || !cs_wire_token_valid(tok)) {
        cs_errf(rp->err, "rank %d needs the job's token (%d hex digits): --token or "
                         "COMMSIM_TOKEN; the controller prints it\n",
                rp->rank, CS_WIRE_TOKEN);
        return -1;
    }
    memcpy(rp->token, tok, sizeof rp->token);
    char msg[256];
    if (cs_heartbeat_limit(&rp->heartbeat, msg, sizeof msg) < 0) {
        cs_errf(rp->err, "%s\n", msg);
        return -1;
    }
    if (rp->world < 1 || rp->rank < 0 || rp->rank >= rp->world || rp->world > CS_WIRE_MAX_WORLD) {
        cs_errf(rp->err, "rank %d is outside a world of %d (--rank, --world)\n",
                rp->rank, rp->world);
        return -1;
    }
    return 0;
}

/* Run the script on this rank with its engine (arg: what the engine's
 * rank_setup built), the link carrying its events and gates. */
static int run_rank(rank_proc *rp, const cs_script *s, const cs_welcome *wel, cs_rank_link *link,
                    void *arg) {
    char msg[512];
    cs_bus bus;
    if (cs_bus_init(&bus, rp->world) < 0) return 1;
    bus.t0 = cs_rank_link_clock(wel); /* the controller's run clock */
    cs_world_config cfg = {
        .world = rp->world,
        .mode = {.eager_limit = wel->eager_limit, .rendezvous_only = wel->rendezvous_only},
        .mem_limit = wel->mem_limit, .seed = wel->seed, .engine = rp->kind->name, .script = s->name,
        .engine_arg = arg, .strict = (wel->flags & CS_WELCOME_STRICT) != 0};
    if (wel->flags & CS_WELCOME_NET)
        cfg.net = (cs_netmodel){.on = true, .alpha_ns = wel->alpha_ns, .bandwidth = wel->bandwidth,
                                .flops = wel->flops};
    memcpy(cfg.coll_algo, wel->coll_algo, sizeof cfg.coll_algo);
    cs_world *w = cs_world_new(&cfg, &bus, msg, sizeof msg);
    /* An engine without a poll loop of its own leaves the link to its thread. */
    if (w && !cs_rank_link_driven(link) && cs_rank_link_start(link, w) < 0) {
        snprintf(msg, sizeof msg, "cannot start the link to the controller");
        cs_world_free(w);
        w = NULL;
    }
    if (!w) {
        cs_errf(rp->err, "rank %d: %s\n", rp->rank, msg);
        cs_bus_destroy(&bus);
        return 1;
    }
    /* ---- ncclproc: bind this thread to what the engine gave the rank (its GPU) */
    cs_engine *e = w->engine;
    if (e->ops->rank_start && e->ops->rank_start(e, cs_world_rank(w, rp->rank)) != CS_OK) {
        cs_errf(rp->err, "rank %d: %s\n", rp->rank, cs_rank_errmsg(cs_world_rank(w, rp->rank)));
        cs_rank_link_stop(link);
        cs_world_free(w);
        cs_bus_destroy(&bus);
        return 1;
    }
    /* ---- end ncclproc */
    cs_bus_subscribe(&bus, cs_rank_link_sink(link));
    if (wel->flags & CS_WELCOME_GATED) cs_world_set_gate(w, cs_rank_link_gate, link);
    cs_script_limits lim = {.mem_limit = wel->mem_limit, .step_limit = wel->step_limit,
                            .out_limit = wel->out_limit};
    cs_script_run(cs_world_rank(w, rp->rank), s, &lim);
    if (w->engine->ops->flush) w->engine->ops->flush(w->engine, true);
    int why = cs_rank_link_finish(link);
    cs_rank_link_stop(link); /* its thread, if it has one, before the world goes */
    cs_world_free(w);
    cs_bus_destroy(&bus);
    /* The job's status is this process's too (the controller's ABORT gives
     * it; a job that ended well closes the link: 0), so that a script or a
     * launcher such as torchrun that runs the ranks by hand sees the job
     * fail. Such a rank's terminal has nothing else: it says so there. */
    if (why != CS_END_NONE && rp->o->by_hand)
        cs_errf(rp->err, "rank %d: the job ended: %s (exit status %d); rank 0's side has the "
                         "report\n", rp->rank, cs_end_words(why), why);
    return why;
}

int cs_launch_rank_process(const cs_run_opts *o) {
    rank_proc rp = {.o = o, .kind = cs_engine_find(o->engine), .rank = o->rank, .world = o->nranks,
                 .err = o->err ? o->err : stderr};
    char msg[512];
    /* Message buffers come and go at the size of the messages: keep freed
     * ones in the heap instead of mapping (and page-faulting) every one anew. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (check_options(&rp) < 0) return 1;
    /* A socket per peer and its own few; strangers on its port come on top. */
    unsigned long long limit;
    unsigned long need = (unsigned long)rp.world + 32, open;
    if (cs_wire_files(need, need + 64, &limit, &open) < 0) {
        char also[64] = ""; /* the ones open already, where they make the difference */
        if (need <= limit) snprintf(also, sizeof also, ", and %lu are open already", open);
        cs_errf(rp.err, "rank %d: %d ranks need about %lu open files in every rank process%s, "
                "more than this one may open (ulimit -n: %llu)\n", rp.rank, rp.world, need, also,
                limit);
        return 1;
    }
    /* ---- ncclproc: what this machine must have for its one rank (a GPU), before dialing */
    if (rp.kind->check && rp.kind->check(1, msg, sizeof msg) < 0) {
        cs_errf(rp.err, "rank %d: %s\n", rp.rank, msg);
        return 1;
    }
    /* ---- end ncclproc */
    cs_script s;
    if (cs_script_load(&s, o->script, msg, sizeof msg) < 0) {
        cs_errf(rp.err, "rank %d: %s\n", rp.rank, msg);
        return 1;
    }
    uint32_t mip;
    uint16_t mport;
    if (cs_wire_parse_addr(o->master ? o->master : "127.0.0.1", 29500, &mip, &mport, msg,
                           sizeof msg) < 0) {
        cs_errf(rp.err, "--master: %s\n", msg);
        cs_script_free(&s);
        return 1;
    }
    int status = 1;
    cs_welcome wel = {0};
    cs_rank_link *link = NULL;
    uint32_t lip = 0;
    if (o->bind && cs_wire_parse_bind(o->bind, &lip, msg, sizeof msg) < 0) {
        cs_errf(rp.err, "--bind: %s\n", msg);
        goto out;
    }
    int cfd = cs_rank_link_dial(mip, mport, cs_now() + CONNECT_SECONDS);
    if (cfd < 0) {
        cs_errf(rp.err, "rank %d: cannot reach the controller at %s: %s\n", rp.rank,
                cs_wire_addr_str(mip, mport, msg, sizeof msg), strerror(errno));
        goto out;
    }
    /* Peers reach this rank where the controller reached it (loopback for a
     * loopback master) unless --bind says otherwise; --bind 0.0.0.0 listens
     * on every interface, and peers are still told that address, not
     * 0.0.0.0 (which is this machine to whoever dials it). */
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    bool any = o->bind && lip == htonl(INADDR_ANY);
    if ((!o->bind || any) && getsockname(cfd, (struct sockaddr *)&me, &len) == 0) lip = me.sin_addr.s_addr;
    link = cs_rank_link_new(cfd, rp.rank, rp.world, rp.token, rp.err); /* cfd is the link's */
    if (!link) goto out;
    cs_rank_link_set_heartbeat(link, rp.heartbeat);
    /* The engine joins with what its peers need to know (the tcp engine: the
     * address it listens on), and builds what it runs on (the mesh). */
    cs_rank_setup setup = {.rank = rp.rank, .world = rp.world, .token = rp.token, .ip = lip, .listen_any = any,
                           .link = link, .wel = &wel, .err = rp.err};
    void *arg = NULL;
    if (rp.kind->rank_setup) {
        if (!(arg = rp.kind->rank_setup(&setup))) goto out;
    } else if (cs_rank_link_join(link, 0, 0, &wel) < 0) {
        goto out;
    }
    status = run_rank(&rp, &s, &wel, link, arg);
out:
    cs_rank_link_free(link);
    free(wel.ip);
    free(wel.port);
    cs_script_free(&s);
    return status;
}

_Static_assert(CS_WIRE_COLL_FAMILIES == CS_COLL_MAX_FAMILIES, "WELCOME carries every family");
_Static_assert(CS_ALGO_N <= CS_WIRE_MAX_ALGO, "algorithm ids fit the wire's bound");
