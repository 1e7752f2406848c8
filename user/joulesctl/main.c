// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl: show, stream and record what joules.ko attributes, and set the
 * model's coefficients. See Documentation/man/joulesctl.1.
 */
#include <stdio.h>

#include "core.h"
#include "uapi/joules_netlink.h"
#include "joulesctl.h"

void jc_nl_err(const struct jnl *nl, enum jnl_op op, int err, const char *what)
{
	const char *k = nl ? jnl_kernel_msg(nl) : NULL;

	if (k)
		cli_err("%s: %s (module: %s)", what, jnl_strerror(op, err), k);
	else
		cli_err("%s: %s", what, jnl_strerror(op, err));
}

int jc_open(struct jnl **nl)
{
	int err = jnl_open(nl);

	if (err)
		cli_err("%s", jnl_strerror(JNL_OP_OPEN, err));
	return err;
}

static const struct cli_cmd commands[] = {
	{ "show", cmd_show, "one process's (or thread's) energy and counters" },
	{ "top", cmd_top, "processes sorted by power, refreshed" },
	{ "watch", cmd_watch,
	  "print node samples and exit records as they arrive" },
	{ "record", cmd_record,
	  "write node samples to a CSV file for joules-train" },
	{ "set", cmd_set, "change model coefficients (atomically, via sysfs)" },
	{ "node", cmd_node, "node totals since the module loaded" },
	{ "export", cmd_export,
	  "Prometheus metrics, for node_exporter's textfile collector" },
};

static void version(void)
{
	printf("joulesctl %s (netlink family version %d, abi %d)\n", JL_VERSION,
	       JOULES_GENL_VERSION, JL_ABI_VERSION);
}

int main(int argc, char **argv)
{
	static const struct cli_tool tool = {
		.name = "joulesctl",
		.about =
			"Per-process energy attribution (joules.ko) from the command line.\n\n",
		.cmds = commands,
		.ncmds = sizeof(commands) / sizeof(commands[0]),
		.version = version,
	};

	return cli_main(&tool, argc, argv);
}
