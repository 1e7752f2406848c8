// SPDX-License-Identifier: GPL-2.0
/*
 * Holds the kernel's receive-timestamp static key (netstamp_needed_key)
 * on for the guest's whole life, as guest-run-tests' keepalive holds the
 * sched_switch tracepoint. A socket that asks for timestamps turns the
 * key on, its close turns it off, and each turn patches a jump in the
 * receive path while other CPUs run it. Under QEMU's multi-threaded
 * software emulation a CPU can then execute the patch's transient int3
 * after the kernel has retired it: "Oops: int3" in
 * __netif_receive_skb_core (seen on 6.12 with stress-ng's sock stressor).
 * With one socket holding it from boot, later sockets only count.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one))) {
		perror("stamp-hold");
		return 1;
	}
	for (;;)
		pause();
}
