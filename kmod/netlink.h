/* SPDX-License-Identifier: GPL-2.0 */
/* netlink.c: the generic netlink family "joules". */
#ifndef JOULES_NETLINK_H
#define JOULES_NETLINK_H

/* Samples and exit records come through report.c's listener. */
int joules_nl_init(void);
void joules_nl_exit(void);

#endif /* JOULES_NETLINK_H */
