/* SPDX-License-Identifier: GPL-2.0 */
/* joulesctl: what the subcommands share. */
#ifndef JOULESCTL_H
#define JOULESCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "nl.h"

/* Exit statuses. */
#define JC_OK 0
#define JC_FAIL 1
#define JC_USAGE 2

/* Set by SIGINT/SIGTERM: loops finish their current step and return. */
extern volatile sig_atomic_t jc_stop;
void jc_catch_signals(void);

/* "joulesctl: <message>" on stderr. */
void jc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of `cmd`: message, then a hint to --help; returns JC_USAGE. */
int jc_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After getopt_long() returned '?': name the bad option; returns JC_USAGE. */
int jc_bad_option(const char *cmd, int argc, char **argv);
/* Report a netlink failure of `op` with the module's explanation, if any. */
void jc_nl_err(const struct jnl *nl, enum jnl_op op, int err, const char *what);

/* Connect to the module; prints why not and returns the error. */
int jc_open(struct jnl **nl);

uint64_t jc_now_ns(void);
/* Positive number of seconds (fractions allowed) as ns; -EINVAL otherwise. */
int jc_parse_secs(const char *s, uint64_t *ns);
/* Positive decimal count. */
int jc_parse_count(const char *s, uint64_t *n);
/* Process/thread id. */
int jc_parse_pid(const char *s, pid_t *pid);

int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_node(int argc, char **argv);

#endif /* JOULESCTL_H */
