/* SPDX-License-Identifier: GPL-2.0 */
/* joulesctl: what the subcommands share beyond user/lib/cli.h. */
#ifndef JOULESCTL_H
#define JOULESCTL_H

#include "cli.h"
#include "nl.h"

/* Report a netlink failure of `op` with the module's explanation, if any. */
void jc_nl_err(const struct jnl *nl, enum jnl_op op, int err, const char *what);

/* Connect to the module; prints why not and returns the error. */
int jc_open(struct jnl **nl);

int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_node(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif /* JOULESCTL_H */
