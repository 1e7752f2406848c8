/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Energy for virtual machines: the host's joules-meterd (--vm-host, vmhost.c)
 * writes each VM's energy as the host's joules attributes it into the VM's
 * virtio-serial channel; inside the VM the "virtio" input (virtio.c) reads
 * it and feeds the guest's module as its wall meter. This header is the
 * line between them and the parts both sides' tests drive directly (no
 * sockets, no netlink): the line format and finding a VM's channel in its
 * QEMU command line.
 */
#ifndef JOULES_METERD_VM_H
#define JOULES_METERD_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The channel's name: libvirt's <target type='virtio' name='...'/>. */
#define JMD_VM_CHANNEL "org.joules.meter"
/* Longer lines are not joules' (a guest reads at most this much per line). */
#define JMD_VM_LINE_MAX 160

/*
 * One line, host to guest, once per host interval:
 *   joules-vm 1 epoch=E seq=N time_ns=T energy_uj=U
 * energy_uj: the VM's cumulative energy as the host attributes it; it only
 * grows within one epoch. epoch: a new one whenever the host's count
 * restarted (its module reloaded, the VM's process or cgroup replaced), so
 * a guest never takes a restart for a drop or a jump. seq: the host's line
 * number for this VM. time_ns: the host's CLOCK_REALTIME when it read the
 * energy. Keys the guest does not know, after these, are ignored (a later
 * host may say more).
 */
struct jmd_vm_line {
	uint64_t epoch;
	uint64_t seq;
	uint64_t time_ns;
	uint64_t energy_uj;
};

/* The line with its newline into buf; its length, or -1 if buf is too small. */
int jmd_vm_format(char *buf, size_t len, const struct jmd_vm_line *l);

/* One line without its newline. 0, or -1 with err saying what is wrong. */
int jmd_vm_parse(const char *line, struct jmd_vm_line *out, char *err,
		 size_t errlen);

/*
 * Where a QEMU process serves the channel, from its command line (argv[0..argc)):
 * a -device virtserialport (key=value or JSON form) named `channel` whose
 * chardev is a -chardev socket. Sets *path (the socket's path, "" when
 * QEMU was given the listening socket as fd=N) or *fd. 0; -1 when this VM
 * has no such channel (err says why: no port by that name, its chardev is
 * not a socket, not QEMU's server side).
 */
int jmd_vm_find_channel(int argc, char *const *argv, const char *channel,
			char *path, size_t pathlen, int *fd, char *err,
			size_t errlen);

/*
 * The owner of a process from its /proc/PID/status text: 0 with its uid
 * and gid when its real, effective, saved and file-system ids are one
 * (uid and gid each); -1 otherwise (a setuid or setgid program in flight:
 * whose socket it names is not clear).
 */
int jmd_vm_owner(const char *status, uid_t *uid, gid_t *gid);

/*
 * The host module's load time, latched: prev (0: none yet) unless est, a
 * new estimate (now minus its uptime, ns), is more than a second away
 * from it. Two reads of a clock are never at one instant; without the
 * latch an estimate near a second's boundary would flap.
 */
uint64_t jmd_vm_load_latch(uint64_t prev, uint64_t est);

/*
 * src for a log line: anything but printable ASCII escaped (\n, \xHH), so
 * that no name or path can start a line of its own; cut to fit.
 */
void jmd_vm_printable(char *out, size_t len, const char *src);

#endif /* JOULES_METERD_VM_H */
