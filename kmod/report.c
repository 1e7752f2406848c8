// SPDX-License-Identifier: GPL-2.0
/*
 * Reports: node totals, and the hand-over of finished records from the
 * worker and the cgroup code to whoever listens (netlink). A mutex keeps
 * the listener from going away under a callback; callbacks may sleep.
 */
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "report.h"
#include "tasks.h"

static DEFINE_MUTEX(report_lock);
static const struct joules_report_ops *listener;	/* under report_lock */

static DEFINE_SPINLOCK(totals_lock);
static struct joules_node_totals totals;
static u64 load_ns;

void joules_report_init(void)
{
	spin_lock(&totals_lock);
	memset(&totals, 0, sizeof(totals));
	load_ns = ktime_get_ns();
	spin_unlock(&totals_lock);
}

void joules_report_register(const struct joules_report_ops *ops)
{
	mutex_lock(&report_lock);
	listener = ops;
	mutex_unlock(&report_lock);
}

void joules_report_unregister(void)
{
	mutex_lock(&report_lock);
	listener = NULL;
	mutex_unlock(&report_lock);
}

static void add_sample(struct joules_node_sample *s)
{
	unsigned int i;

	spin_lock(&totals_lock);
	s->seq = ++totals.intervals;
	totals.energy_uj += s->energy_uj;
	totals.idle_uj += s->idle_uj;
	totals.task_uj += s->energy_uj - s->idle_uj;
	totals.lag_uj += s->lag_uj;
	totals.lag_idle_uj += s->lag_idle_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		totals.domain_uj[i] += s->domain_uj[i];
	for (i = 0; i < JL_NR_FEATURES; i++)
		totals.feat.v[i] += s->feat.v[i];
	totals.feat.present |= s->feat.present;
	totals.source = s->source;
	totals.domains = s->domains;
	totals.model_generation = s->model_generation;
	spin_unlock(&totals_lock);
}

void joules_report_sample(struct joules_node_sample *s)
{
	add_sample(s);
	mutex_lock(&report_lock);
	if (listener)
		listener->sample(s);
	mutex_unlock(&report_lock);
}

bool joules_report_exits_wanted(void)
{
	bool want;

	mutex_lock(&report_lock);
	want = listener && listener->exits_wanted();
	mutex_unlock(&report_lock);
	return want;
}

void joules_report_exit(const struct joules_stats *st)
{
	mutex_lock(&report_lock);
	if (listener)
		listener->exit_record(st);
	mutex_unlock(&report_lock);
}

void joules_report_cgroup_exit(const struct joules_cg_stats *cs)
{
	mutex_lock(&report_lock);
	if (listener)
		listener->cgroup_exit(cs);
	mutex_unlock(&report_lock);
}

void joules_node_get(struct joules_node_totals *nt)
{
	spin_lock(&totals_lock);
	*nt = totals;
	spin_unlock(&totals_lock);
	nt->tasks_tracked = joules_tasks_tracked();
	nt->uptime_ns = ktime_get_ns() - load_ns;
}
