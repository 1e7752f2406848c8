// SPDX-License-Identifier: GPL-2.0
/*
 * The joules metric families (metrics.h, Documentation/metrics.rst): the
 * collectors' table, the helpers they share, the scrape that runs them
 * and the exporter's own families. Each collector, its gather and its
 * render, is a file of collector/.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cgname.h"
#include "nl.h"
#include "parse.h"
#include "collector/collector.h"

const struct jm_collector_info *const jm_collectors[JM_NR_COLLECTORS] = {
	[JM_C_MODULE] = &jm_module_collector,
	[JM_C_NODE] = &jm_node_collector,
	[JM_C_MODEL] = &jm_model_collector,
	[JM_C_METER] = &jm_meter_collector,
	[JM_C_WALLMETER] = &jm_wallmeter_collector,
	[JM_C_STATIC] = &jm_static_collector,
	[JM_C_PROCESS] = &jm_process_collector,
	[JM_C_CGROUP] = &jm_cgroup_collector,
};

const char *const jm_reason_names[JM_NR_REASONS] = {
	[JM_OK] = "ok",
	[JM_NOT_LOADED] = "module_not_loaded",
	[JM_PERMISSION] = "permission",
	[JM_UNSUPPORTED] = "unsupported",
	[JM_FAILED] = "error",
};

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_build = { "joules_exporter_build", PROM_INFO, NULL,
	"Version of the joules exporter" },
f_scrape_dur = { "joules_exporter_scrape_duration_seconds", PROM_GAUGE, "seconds",
	"Time this scrape spent gathering" },
f_coll_dur = { "joules_exporter_collector_duration_seconds", PROM_GAUGE, "seconds",
	"Time each collector spent gathering this scrape" },
f_coll_ok = { "joules_exporter_collector_success", PROM_GAUGE, NULL,
	"1 if the collector gathered its series this scrape, 0 if not (see joules_exporter_collector_error)" },
f_coll_err = { "joules_exporter_collector_error", PROM_GAUGE, NULL,
	"Present (1) while a collector fails, with the reason: module_not_loaded, permission, unsupported, error" },
f_errors = { "joules_exporter_scrape_errors", PROM_COUNTER, NULL,
	"Scrapes in which the collector failed, since the exporter started" };
/* clang-format on */

void jm_init(struct jm_state *s, unsigned int top, const char *sysfs,
	     jm_log_fn log)
{
	const char *env = getenv("JOULES_SYSFS");

	memset(s, 0, sizeof(*s));
	s->top = top > JM_MAX_TOP ? JM_MAX_TOP : top;
	s->sysfs = sysfs ? sysfs : env && *env ? env : "/sys/kernel/joules";
	env = getenv("JOULES_PROC");
	s->proc = env && *env ? env : "/proc";
	s->log = log;
	s->family = -1;
	s->cg_depth = JM_CG_ALL;
	s->cg_root_fd = -1;
}

void jm_set_live(struct jm_state *s, bool live)
{
	s->live = live;
}

void jm_close(struct jm_state *s)
{
	free(s->held);
	s->held = NULL;
	jnl_close(s->nl);
	s->nl = NULL;
	if (s->cg_have_match)
		regfree(&s->cg_match);
	s->cg_have_match = false;
	if (s->cg_root_fd >= 0)
		close(s->cg_root_fd);
	s->cg_root_fd = -1;
	jm_kepler_state_free(s);
}

void jm_snapshot_free(struct jm_snapshot *snap)
{
	free(snap->procs);
	snap->procs = NULL;
	snap->nprocs = 0;
	for (size_t i = 0; i < snap->ncgroups; i++)
		free(snap->cgroups[i].path);
	free(snap->cgroups);
	snap->cgroups = NULL;
	snap->ncgroups = 0;
	jm_kepler_free(snap);
}

uint64_t jm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void jm_fail(struct jm_status *st, enum jm_reason r, int err, const char *fmt,
	     ...)
{
	va_list ap;

	st->reason = r;
	st->err = err;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
}

/* The reason a failed netlink request or file read stands for. */
enum jm_reason jm_reason_of(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return JM_PERMISSION;
	case ENOENT:
		return JM_NOT_LOADED;
	case EOPNOTSUPP:
		return JM_UNSUPPORTED;
	default:
		return JM_FAILED;
	}
}

/*
 * The failure of a sysfs read: without the directory the module is not
 * loaded, which deserves that sentence rather than a path and ENOENT.
 */
void jm_sysfs_fail(const struct jm_state *s, struct jm_status *st,
		   const char *name, int err)
{
	if (err == -ENOENT && access(s->sysfs, F_OK))
		jm_fail(st, JM_NOT_LOADED, err,
			"joules module not loaded (no %s)", s->sysfs);
	else
		jm_fail(st, jm_reason_of(err), err, "%s/%s: %s", s->sysfs, name,
			strerror(-err));
}

/* A small sysfs file, trailing newline dropped: its length or -errno. */
ssize_t jm_read(const struct jm_state *s, const char *name, char *buf,
		size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->sysfs, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n;
}

int jm_read_u64(const struct jm_state *s, const char *name, uint64_t *v)
{
	char buf[64];
	const char *why;
	ssize_t n = jm_read(s, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return parse_u64(buf, v, &why) ? -EINVAL : 0;
}

/* Is cap in this process's effective set? */
bool jm_capable(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Open the netlink handle if it is closed. A changed family id means the
 * module was registered anew: a reload, even if its uptime has already
 * passed the old one.
 */
int jm_open(struct jm_state *s)
{
	int err, fam;

	if (s->nl)
		return 0;
	err = jnl_open(&s->nl);
	if (err)
		return err;
	jnl_set_lagged(s->nl, s->lagged);
	jnl_set_cgroup_root(s->nl, s->cg_root_fd);
	fam = jnl_family_id(s->nl);
	if (s->family >= 0 && fam != s->family)
		s->reload_seen = true;
	s->family = fam;
	return 0;
}

/*
 * A request failed: the module may have been reloaded (the old family id
 * is gone), so reconnect and try once more. -EPERM is final. If the
 * module cannot be reached any more, *op says so.
 */
static int jm_retry(struct jm_state *s, int err, enum jnl_op *op)
{
	int oerr;

	if (err != -EPERM) {
		/* The handle only: the settings (--cgroups.match) stay. */
		jnl_close(s->nl);
		s->nl = NULL;
		oerr = jm_open(s);
		if (oerr) {
			*op = JNL_OP_OPEN;
			return oerr;
		}
		return 1;
	}
	return err;
}

int jm_request(struct jm_state *s, int (*req)(struct jnl *nl, void *arg),
	       void *arg, enum jnl_op *op)
{
	int err;

	if (!s->nl) {
		*op = JNL_OP_OPEN;
		return -ENOENT;
	}
	err = req(s->nl, arg);
	if (err) {
		err = jm_retry(s, err, op);
		if (err == 1)
			err = req(s->nl, arg);
	}
	return err;
}

void jm_request_fail(struct jm_status *st, const char *request, enum jnl_op op,
		     int err, const char *kmsg)
{
	jm_fail(st, jm_reason_of(err), err, "%s%s%s%s%s%s",
		op == JNL_OP_OPEN ? "" : request, op == JNL_OP_OPEN ? "" : ": ",
		jnl_strerror(op, err), kmsg ? " (module: " : "",
		kmsg ? kmsg : "", kmsg ? ")" : "");
}

/* Log a collector's state when it changes: once, not every scrape. */
static void jm_log_change(struct jm_state *s, int c, const struct jm_status *st)
{
	if (!s->log)
		return;
	if (s->logged[c] && s->last[c] == st->reason)
		return;
	if (st->reason != JM_OK)
		s->log("error", jm_collectors[c]->name, st->msg);
	else if (s->logged[c])
		s->log("info", jm_collectors[c]->name, "ok again");
	s->logged[c] = true;
	s->last[c] = st->reason;
}

/* Node-wide measured figures: held for an epoch in the lagged view. */
static bool jm_node_wide(int c)
{
	return c == JM_C_NODE || c == JM_C_WALLMETER || c == JM_C_STATIC;
}

/* Collector c's part of the snapshot, from src to dst. */
static void jm_copy_part(struct jm_snapshot *dst, const struct jm_snapshot *src,
			 int c)
{
	dst->st[c] = src->st[c];
	if (c == JM_C_NODE) {
		dst->node = src->node;
		dst->load_time_ms = src->load_time_ms;
	} else if (c == JM_C_WALLMETER) {
		dst->wall = src->wall;
	} else {
		memcpy(dst->statics, src->statics, sizeof(dst->statics));
		dst->nstatics = src->nstatics;
	}
}

/*
 * The lagged view this scrape: asked for (not --energy live) and the
 * module's policy on. 0, or the epoch in ns: whoever reaches the exporter
 * reads node-wide figures no fresher than that (admin-guide.rst,
 * "Measured energy").
 */
static uint64_t jm_epoch_ns(struct jm_state *s)
{
	uint64_t ms = 0, iv = 0;

	if (s->live || jm_read_u64(s, "unpriv_interval_ms", &ms) || !ms) {
		s->lagged = false;
	} else {
		s->lagged = true;
		/* An epoch ends at the first tick that long after it began. */
		if (!jm_read_u64(s, "interval_ms", &iv) && iv > ms)
			ms = iv;
	}
	if (s->nl)
		jnl_set_lagged(s->nl, s->lagged);
	return s->lagged ? ms * 1000000ULL : 0;
}

void jm_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	uint64_t t0 = jm_now(), epoch = jm_epoch_ns(s);
	/* A model's figures alone are no measurement: nothing to hold. */
	bool reuse = epoch && s->held && t0 - s->held_at < epoch &&
		     (s->held->node.source & (REC_SRC_RAPL | REC_SRC_METER));

	memset(snap, 0, sizeof(*snap));
	for (int c = 0; c < JM_NR_COLLECTORS; c++) {
		struct jm_status *st = &snap->st[c];
		uint64_t t;

		if (!jm_collectors[c]->gather ||
		    (jm_collectors[c]->wanted && !jm_collectors[c]->wanted(s)))
			continue;
		if (reuse && jm_node_wide(c)) {
			jm_copy_part(snap, s->held, c);
			continue;
		}
		st->enabled = true;
		t = jm_now();
		jm_collectors[c]->gather(s, snap);
		st->ns = jm_now() - t;
		if (st->reason != JM_OK)
			s->errors[c]++;
		jm_log_change(s, c, st);
	}
	/*
	 * Loaded: the family answered this scrape. An open handle alone
	 * proves nothing: the module may have gone since it was opened, which
	 * the node request finds out (and then closes the handle).
	 */
	if (epoch && !reuse) {
		if (!s->held)
			s->held = malloc(sizeof(*s->held));
		if (s->held) {
			for (int c = 0; c < JM_NR_COLLECTORS; c++)
				if (jm_node_wide(c))
					jm_copy_part(s->held, snap, c);
			s->held_at = t0;
		}
	}
	snap->loaded = s->nl != NULL;
	snap->nl_version = s->nl ? jnl_version(s->nl) : 0;
	/* Counted once, however many signs of it this scrape saw. */
	if (s->reload_seen)
		s->reloads++;
	s->reload_seen = false;
	if (s->compat == JM_COMPAT_KEPLER)
		jm_kepler_gather(s, snap);
	snap->ns = jm_now() - t0;
}

static void render_exporter(const struct jm_state *s,
			    const struct jm_snapshot *snap,
			    struct prom_writer *w)
{
	struct prom_label v[] = { { "version", JL_VERSION } };
	struct prom_label c[2] = { { "collector", NULL }, { "reason", NULL } };

	prom_family(w, &f_build);
	prom_u64(w, v, NL(v), 1);
	prom_family(w, &f_scrape_dur);
	prom_fixed(w, NULL, 0, snap->ns, 9);
	prom_family(w, &f_coll_dur);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i]->name;
		prom_fixed(w, c, 1, snap->st[i].ns, 9);
	}
	prom_family(w, &f_coll_ok);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i]->name;
		prom_u64(w, c, 1, snap->st[i].reason == JM_OK);
	}
	prom_family(w, &f_coll_err);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled || snap->st[i].reason == JM_OK)
			continue;
		c[0].value = jm_collectors[i]->name;
		c[1].value = jm_reason_names[snap->st[i].reason];
		prom_u64(w, c, 2, 1);
	}
	prom_family(w, &f_errors);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i]->name;
		prom_u64(w, c, 1, s->errors[i]);
	}
}

void jm_render(const struct jm_state *s, const struct jm_snapshot *snap,
	       struct prom_writer *w)
{
	for (int c = 0; c < JM_NR_COLLECTORS; c++) {
		const struct jm_status *st = &snap->st[c];

		if (st->enabled && jm_collectors[c]->render &&
		    (jm_collectors[c]->shown & (1u << st->reason)))
			jm_collectors[c]->render(s, snap, w);
	}
	jm_kepler_render(s, snap, w);
	render_exporter(s, snap, w);
}

int jm_scrape(struct jm_state *s, struct prom_writer *w, int *failed)
{
	struct jm_snapshot snap;
	int nfail = 0;

	jm_gather(s, &snap);
	jm_render(s, &snap, w);
	for (int i = 0; i < JM_NR_COLLECTORS; i++)
		if (snap.st[i].enabled && snap.st[i].reason != JM_OK)
			nfail++;
	jm_snapshot_free(&snap);
	if (failed)
		*failed = nfail;
	return prom_finish(w);
}
