// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding the module: one METER_FEED per good reading over the joules
 * generic netlink family. The module may be absent at start, loaded later,
 * or reloaded under the running daemon: any error closes the socket, the
 * family is resolved again at the next reading, and the first reading fed
 * after that is a new baseline (METER_RESET), since the module's side of
 * the meter starts afresh. Errors are logged when they change, not at
 * every interval.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jmd.h"
#include "nl.h"

void jmd_feeder_init(struct jmd_feeder *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->need_reset = true;
}

static void feed_log(struct jmd_feeder *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void feed_log(struct jmd_feeder *f, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	if (!f->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	f->log(f->log_ctx, buf);
}

/*
 * One METER_FEED with the reading's age, so that the module's rates go by
 * when it was read, not when it arrived; without it once a module from
 * before METER_AGE_NS has refused it (stamped on receipt alone then).
 */
static int feed_once(struct jmd_feeder *f, uint64_t uj, uint64_t t_ns, bool rst)
{
	uint64_t now = cli_now_ns(), age = t_ns && t_ns < now ? now - t_ns : 0;
	int err;

	if (f->no_age || !age)
		return jnl_meter_feed(f->nl, f->name, uj, rst);
	err = jnl_meter_feed_aged(f->nl, f->name, uj, age, rst);
	if (err != -EINVAL)
		return err;
	err = jnl_meter_feed(f->nl, f->name, uj, rst);
	if (!err) {
		f->no_age = true;
		feed_log(
			f,
			"feed: the module takes no METER_AGE_NS; its readings are stamped on receipt alone");
	}
	return err;
}

int jmd_feed(struct jmd_feeder *f, uint64_t uj, uint64_t t_ns, bool reset,
	     bool verbose)
{
	enum jnl_op op = JNL_OP_OPEN;
	bool rst = reset || f->need_reset;
	int err = 0;

	if (!f->nl) {
		err = jnl_open(&f->nl);
		if (err)
			f->nl = NULL;
		/* Perhaps another module: try the age again. */
		f->no_age = false;
	}
	if (!err) {
		op = JNL_OP_METER_FEED;
		err = feed_once(f, uj, t_ns, rst);
	}
	if (err) {
		if (err != f->err) {
			const char *km = f->nl ? jnl_kernel_msg(f->nl) : NULL;

			feed_log(f, "feed: %s%s%s; retrying every interval",
				 jnl_strerror(op, err), km ? ": " : "",
				 km ? km : "");
		}
		f->err = err;
		/* Resolve the family again next time (a reloaded module). */
		jnl_close(f->nl);
		f->nl = NULL;
		f->need_reset = true;
		f->failed++;
		return err;
	}
	if (f->err)
		feed_log(
			f,
			"feed: the module takes readings again (new baseline)");
	else if (verbose)
		feed_log(f, "fed %s: %llu uJ%s", f->name,
			 (unsigned long long)uj, rst ? " (new baseline)" : "");
	f->err = 0;
	f->need_reset = false;
	f->fed++;
	return 0;
}

void jmd_feeder_close(struct jmd_feeder *f)
{
	jnl_close(f->nl);
	f->nl = NULL;
}
