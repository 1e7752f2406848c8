/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules-validate: what main.c (options, the procedure, the report) and
 * sys.c (cgroups, stress-ng children, the machine) share.
 */
#ifndef JOULES_VALIDATE_H
#define JOULES_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The workloads, in the report's order. */
enum vw { VW_CPU, VW_MATRIX, VW_MEMORY, VW_IO, VW_NETWORK, VW_N };
extern const char *const vw_names[VW_N];
#define VW_ALL ((1u << VW_N) - 1)

/* One workload's cgroup and stress-ng child. */
struct vw_child {
	char dir[4096]; /* <root>/joules-validate.<pid>/<name> */
	uint64_t cgid; /* the cgroup's id, for GET_CGROUP */
	pid_t pid; /* 0: not running */
	int status; /* waitpid() status once reaped */
	int logfd; /* memfd with stress-ng's output */
};

/* ---- sys.c ---- */

/* The directory is on a cgroup v2 mount. */
bool vsys_is_cgroup2(const char *dir);
/*
 * stress-ng's path: `name` itself when it has a '/', else looked up in
 * PATH; NULL when not found or not executable.
 */
char *vsys_find_exec(const char *name);
/*
 * The loopback interface is up with an IPv4 address in 127/8: stress-ng's
 * sock stressor then binds to it (--sock-if lo), never to every
 * interface, which it does when lo has no address.
 */
bool vsys_loopback_ok(void);
/* A hypervisor's name when running under one (for the report's note), else NULL. */
const char *vsys_hypervisor(void);

/* mkdir the cgroup and learn its id; 0, or -errno with err set. */
int vsys_cg_create(struct vw_child *c, char *err, size_t errlen);
/* rmdir it, waiting a little for exiting tasks; 0 or -errno. */
int vsys_cg_remove(const char *dir);
/* Its cgroup.events says nothing runs in it any more. */
bool vsys_cg_empty(const char *dir);
/* SIGKILL everything in it (cgroup.kill, else each pid of cgroup.procs). */
void vsys_cg_kill(const char *dir);

/*
 * Start argv (argv[0] the program's path) inside c's cgroup from its first
 * instruction (clone3 CLONE_INTO_CGROUP, else a child that moves itself
 * before exec), stdout and stderr into a fresh memfd. 0, or -errno with
 * err set.
 */
int vsys_spawn(struct vw_child *c, char *const argv[], char *err,
	       size_t errlen);
/* The last line stress-ng wrote (for messages), "" if none. */
void vsys_log_tail(const struct vw_child *c, char *buf, size_t len);

#endif /* JOULES_VALIDATE_H */
